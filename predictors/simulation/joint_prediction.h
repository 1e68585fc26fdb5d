// Predicting one iteration of a job of several ranks (docs/prediction.md
// "Multi-rank prediction"): every rank's trace predicted as predictGraph
// does, then all ranks simulated together, their collectives matched by
// group and position (core/comm/collective_sequence.h, the distributed
// replay's own matching) so that each starts when its group's last member is
// ready. Or one rank's trace standing for N identical ranks (symmetric), at
// the cost of one.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/graph.h"
#include "predictors/comm/sync_jitter.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/predictor.h"

namespace tracetwin::predictors {

struct RankInput {
  const core::Graph* graph = nullptr;
  PredictOptions opts;  // this rank's: recorded kernel times, overheads ...
  // When the rank entered the iteration, on a clock all ranks share (us);
  // the ranks of a recorded job do not enter together (RankStarts below).
  double start_us = 0;
};

// Ops, device and CPU time of one family in a rank's prediction.
struct FamilyTotals {
  int64_t ops = 0;
  double device_us = 0;
  double cpu_us = 0;
};

struct RankReport {
  int64_t rank = 0;
  double start_ms = 0;         // entry into the iteration, after the earliest rank's
  double iteration_ms = 0;     // from its own entry to its own end
  double compute_ms = 0;       // busy time of its non-collective ops
  double comm_ms = 0;          // collectives' transfer
  double wait_ms = 0;          // collectives ready here and waiting for their group
  double exposed_comm_ms = 0;  // transfer and wait not hidden under compute
  // Breakdown, notes ... (iteration_ms as above); per_op and unmodelled_ops
  // only for rank 0 unless MultiRankOptions::every_rank_ops (a 100k-op
  // trace's ops cost ~40 MB a rank, and holding 8 ranks' made each rank's
  // prediction 1.2x slower on the build host).
  Prediction prediction;
  std::map<std::string, FamilyTotals> families;
};

struct CollectiveReport {
  std::string name;   // canonical ("all_reduce", "all_to_all_single" ...)
  std::string group;  // recorded group name; empty: the default (world) group
  int64_t position = 0;           // its place among the group's collectives
  std::vector<int64_t> members;   // ranks
  std::vector<core::NodeId> nodes;  // per member: the op in its trace
  int64_t bytes = -1;             // the largest member's tensor bytes; -1 unknown
  double start_ms = 0;            // when the last member was ready (shared clock)
  double transfer_us = 0;
  std::string transfer_from;      // "model", "recorded (shortest member kernel)"
  int64_t last_rank = -1;         // the member the others waited for
  std::vector<double> wait_us;    // per member
};

struct MultiRankPrediction {
  int64_t world_size = 1;
  bool symmetric = false;     // one trace for world_size identical ranks
  double iteration_ms = 0;    // the step: the slowest rank's iteration
  int64_t slowest_rank = 0;
  int64_t straggler = -1;     // the rank the others waited for most; -1: nobody waited
  std::vector<RankReport> ranks;  // symmetric: one, standing for all
  std::vector<CollectiveReport> collectives;
  std::vector<std::string> notes;
};

struct MultiRankOptions {
  bool every_rank_ops = false;  // keep every rank's per-op list, not only rank 0's
  // Ranks on a CPU device run on one machine and share its cores
  // (docs/prediction.md "Co-located ranks"; `--nproc N` on one host): 0 takes
  // the cores from the device spec (compute_units), < 0 gives every rank a
  // host of its own (one rank per machine). GPU ranks have a device each.
  double host_cores = 0;
  // Intra-op threads of each rank's CPU ops: the replay's --threads, which
  // the host models were calibrated with (1 for the bundled models).
  double rank_threads = 1;
  // Each rank's Prediction::schedule (a timeline; implies every_rank_ops).
  // Off by default: plain predictions and sweeps do not pay for it.
  bool keep_schedule = false;
};

// Rank i of the job is ranks[i]. Throws InputError when the traces are not
// of one job (their collectives differ on a group: the distributed replay's
// check) or their orders of collectives cross.
MultiRankPrediction predictRanks(const std::vector<RankInput>& ranks, const ModelSet& models,
                                 const MultiRankOptions& options = {});

// The cores a CPU job's ranks share: all ranks on one machine (`--nproc N`
// on one host) unless the options give each a host of its own (host_cores
// < 0). 0: not shared (a GPU device, one rank, or separate hosts).
double sharedCores(const ModelSet& models, const PredictOptions& opts, int64_t world_size,
                   const MultiRankOptions& options = {});

// The arrival jitter the comm model measured; null when it has none, or when
// the prediction is for another device or a system's cluster: the jitter is
// the measured host's (its scheduler, its tenants), not the destination's.
const SyncJitter* syncJitterOf(const ModelSet& models, const PredictOptions& opts);

// Per-family totals of a prediction's ops.
std::map<std::string, FamilyTotals> familyTotals(const Prediction& p);

// One rank's trace for a data-parallel job of `world_size` identical ranks:
// every collective on the world group, no rank waits for another; it costs
// one rank's prediction whatever `world_size` is.
MultiRankPrediction predictSymmetric(const core::Graph& graph, int64_t world_size,
                                     const ModelSet& models, PredictOptions opts);

// predictionToJson of rank 0 (single-rank readers keep working) with the
// step as iteration_ms and, on top, rank0_iteration_ms, world_size,
// symmetric, slowest_rank, straggler, ranks [{rank, start_ms, iteration_ms,
// compute_ms, comm_ms, wait_ms, exposed_comm_ms, families}] and collectives.
nlohmann::json multiRankToJson(const MultiRankPrediction& m);

}  // namespace tracetwin::predictors
