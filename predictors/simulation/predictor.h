// Predicting one iteration of a trace: kernel models per op, CPU overheads,
// collectives, then the critical-path simulation.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/graph.h"
#include "predictors/specs/device_spec.h"
#include "predictors/specs/system_spec.h"
#include "predictors/models/model_set.h"
#include "predictors/host/overheads.h"
#include "predictors/simulation/critical_path.h"

namespace tracetwin::predictors {

struct PredictOptions {
  // Destination device: calibrated times are scaled to it (Habitat-style).
  std::optional<DeviceSpec> target;
  // CPU overheads from `tracetwin link`; else the ModelSet's, else defaults.
  std::optional<OverheadTable> overheads;
  // Which of a measured overhead's statistics is charged (overheads.h).
  OverheadStatistic overhead_statistic = OverheadStatistic::kMedian;
  // Not chosen by the user: a table that says "statistic": "mean" (T1-T5
  // corrected for the profiler's cost, core/kineto/overheads.h) is charged
  // by its mean, any other by overhead_statistic.
  bool overhead_statistic_from_table = false;
  // World size for collectives whose trace records none (pg_size -1).
  int64_t default_world_size = 1;
  // Every collective runs on default_world_size ranks, whatever its trace
  // recorded: one rank's trace standing for a data-parallel job of that
  // size (`predict TRACE --world-size N`, symmetric ranks).
  bool force_world_size = false;
  // Link used for collectives: "nvlink", "infiniband" ...; empty = the
  // fastest link the device lists.
  std::string comm_link;
  // A cluster (configs/systems/*.yaml): collectives take its topology's
  // hierarchical alpha-beta time (predictors/comm/topology.h) instead of the
  // model set's comm model; what-if on another system is another file.
  std::optional<SystemSpec> system;
  // Device time and kernel count by op id, recorded in a linked Kineto trace
  // (`predict --kernel-times`). They replace the kernel models' times for
  // those ops, so the CPU-overhead model and the critical path are judged
  // on their own against the original step (an oracle for the kernels).
  struct RecordedKernels {
    double device_us = 0;
    int64_t kernels = 0;
  };
  std::unordered_map<core::NodeId, RecordedKernels> recorded_kernels;
  // Top-level ops left out of the prediction: `compare` passes the ops its
  // replay skipped or failed, so that both sides time the same graph.
  std::unordered_set<core::NodeId> excluded;
  // The host's CPU-side costs (T1..T5 and the between-op terms) times this:
  // 0.5 asks what a host twice as fast would do. On a CPU device the ops'
  // own times are the kernel models' and are not scaled.
  double host_scale = 1.0;
  // Embedding ops' index-reuse histograms by op id (kernels/feature_shapes.h:
  // the share of unique rows per access-count bin), where the indices'
  // distribution is known (a sweep file's Zipf tables); the rest assume
  // uniformly random indices.
  std::unordered_map<core::NodeId, std::vector<double>> index_reuse;
  // Keep each op's simulated CPU span and kernels (Prediction::schedule),
  // for `--timeline`.
  bool keep_schedule = false;
  // CPU ranks sharing a host: the part of its last-level cache this rank's
  // data holds (host/step_cache_terms.h, markColdInputs; 1: alone), and
  // whether to measure the rank's traffic through it
  // (PreparedPrediction::llc_traffic_bytes) to give the shares.
  double llc_share = 1.0;
  bool measure_llc_traffic = false;
};

struct OpPrediction {
  core::NodeId id = core::kNoNode;
  core::InternedText name;  // the node's: a pointer copy per op, not a string
  core::InternedText family;
  double predicted_us = 0.0;  // device time (CPU device: op time)
  double cpu_us = 0.0;        // CPU time charged to the op (T1..T5)
  // The host's side in two parts (replay --host-time model): the gap before
  // the op (T1 and the between-op terms) and the op's own host time (GPU:
  // T2..T5 and its launches; CPU device: the op's predicted time, which runs
  // on the host).
  double gap_us = 0.0;
  double host_us = 0.0;
  // Kernels the simulation launched for the op on a GPU (a linked trace's,
  // the model set's launch counts, else one per kernel family); -1 on a CPU.
  int kernels = -1;
  core::InternedText model;   // kind of model used; "fallback:<kind>" when unmodelled
  double code_cold_us = 0.0;  // of predicted_us, the code-cold term (CPU models; code_cold.h)
  // Of predicted_us, reading cold output lines from DRAM before writing them
  // (CPU models; ColdBytes::outputs in cache_reuse.h).
  double cold_output_us = 0.0;
  // Input bytes last touched more than a cache's worth of traffic ago
  // (ColdBytes::inputs): why an op costs more in a step than alone.
  double cold_input_bytes = 0.0;
  // Of predicted_us, reading those bytes from DRAM, for models whose time is
  // the cache-hot one (GEMM and convolution on a CPU; addColdDramReads).
  double cold_input_us = 0.0;
  // Of predicted_us, the latency of the input tensors that went cold (their
  // metadata and first lines; small CPU ops, cold_tensors.h).
  double cold_tensor_us = 0.0;
  // Of predicted_us, faulting in outputs mapped fresh for the call (CPU
  // models; fresh_pages.h).
  double page_fault_us = 0.0;
  // The inputs' reuse distance in the iteration, where the op's trees read
  // it (reuse_distance.h); negative otherwise.
  double input_reuse_bytes = -1.0;
  // Of the op's time on a CPU, the part its bytes take at the device's memory
  // bandwidth (colocation.h's memoryShare): what co-located ranks contend for.
  double memory_share = 0.0;
};

struct Breakdown {
  double device_active_ms = 0.0;
  double device_idle_ms = 0.0;
  double cpu_bound_ms = 0.0;     // device idle while waiting for the CPU
  double exposed_comm_ms = 0.0;  // communication not overlapped by compute
};

// Ops of a family the models were not fitted on, by name.
struct UncalibratedOp {
  std::string name;
  std::string family;
  int64_t count = 0;
};

// One op as the critical-path simulation placed it (PredictOptions::
// keep_schedule): its CPU thread, its stream and its times.
struct ScheduledOp {
  core::NodeId id = core::kNoNode;
  int64_t thread = 0;
  int64_t stream = 0;
  bool cpu_only = false;  // a CPU device: the op runs on its thread, no kernels
  SimOpSchedule times;
};

struct Prediction {
  double iteration_ms = 0.0;
  std::string device;  // device the times are for
  std::vector<OpPrediction> per_op;
  Breakdown breakdown;
  std::vector<OpPrediction> unmodelled_ops;  // predicted by a device-spec fallback
  // Predicted by their family's analytic base (ModelSet::calibrated_ops).
  std::vector<UncalibratedOp> uncalibrated_ops;
  std::vector<std::string> notes;  // defaults used, scaling applied ...
  std::vector<ScheduledOp> schedule;  // in per_op's order, when keep_schedule
};

// Predicts the ops core::selectTopLevelOps picks from `graph`.
Prediction predictGraph(const core::Graph& graph, const ModelSet& models,
                        const PredictOptions& opts);

// predictGraph in two halves, for the joint simulation of several ranks
// (joint_prediction.h): every op predicted and charged its CPU costs, the
// simulation's input built, and the prediction completed from a simulation
// of those ops (iteration_ms and the breakdown).
struct PreparedPrediction {
  Prediction p;               // everything but iteration_ms and breakdown
  std::vector<SimOp> sim;     // per op of p.per_op
  // (op index, message bytes) of every collective, in op order.
  std::vector<std::pair<size_t, double>> comm_bytes;
  // With PredictOptions::measure_llc_traffic: one iteration's bytes brought
  // into the private caches from beyond them (0 without a cache model).
  double llc_traffic_bytes = 0;
};
PreparedPrediction preparePrediction(const core::Graph& graph, const ModelSet& models,
                                     const PredictOptions& opts);
void completePrediction(const SimResult& result, Prediction* p);
// Moves a simulation's kept schedule (simulate(sim, true)) into
// p->schedule, one ScheduledOp per simulated op (per_op's order).
void attachSchedule(const std::vector<SimOp>& sim, SimResult* res, Prediction* p);

// Prediction as JSON: iteration_ms, device, per_op, breakdown, unmodelled_ops,
// uncalibrated_ops, notes.
nlohmann::json predictionToJson(const Prediction& p);
// The step terms' shares of an op's prediction (code_cold_us, cold_output_us,
// cold_input_bytes, cold_input_us, cold_tensor_us, page_fault_us), where non-zero, into `op`.
void addStepTerms(const OpPrediction& o, nlohmann::json* op);
// [{"name", "family", "count"}, ...] of Prediction::uncalibrated_ops, as
// both `predict` and `compare` write it.
nlohmann::json uncalibratedOpsJson(const Prediction& p);

}  // namespace tracetwin::predictors
