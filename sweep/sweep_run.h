// Predicting every plan of a sweep (docs/sweeps.md): per plan, the per-rank
// traces of the step (step_trace.h) predicted together with the multi-rank
// predictor, the per-rank split into embedding, dense, communication and
// waiting, memory feasibility, and the plans ranked by predicted step.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <deque>
#include <unordered_map>

#include "core/graph.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/joint_prediction.h"
#include "predictors/simulation/predictor.h"
#include "sweep/step_trace.h"
#include "sweep/strategies.h"
#include "sweep/sweep_spec.h"

namespace tracetwin::sweep {

struct ComposedModel;  // composed_model.h

struct RankResult {
  int rank = 0;
  double iteration_ms = 0;
  double embedding_ms = 0;  // the tables' ops: lookups, backward, their optimizer updates
  double dense_ms = 0;      // everything else but collectives
  double comm_ms = 0;       // collectives' transfer
  double wait_ms = 0;       // collectives ready here, waiting for their group
  int64_t memory_bytes = 0;  // tables, their gradients and optimizer state, dense parameters
};

struct PlanResult {
  Plan plan;
  bool feasible = true;
  std::string infeasible;  // why not
  double predicted_ms = 0;  // the step: the slowest rank
  double imbalance = 0;     // max / mean of the ranks' embedding + dense time, minus 1
  std::vector<RankResult> ranks;
  // "joint": the multi-rank predictor on the plan's graphs; "composed": the
  // screen of composed_model.h (sweeps of more than SweepOptions::full_max plans).
  std::string predicted_by = "joint";
};

// Per-rank memory a plan needs (bytes): float32 weights and their gradients
// (sparse: the looked-up rows' values and indices), no optimizer state for
// plain SGD.
// Row- and column-wise shards hold their rows / columns; a data-parallel table
// is whole on every rank with a dense gradient and its copy in the bucket.
int64_t rankMemoryBytes(const SweepSpec& spec, const std::vector<Placement>& place, int rank);
int64_t rankMemoryBytes(const SweepSpec& spec, const std::vector<int>& owner, int rank);

// A plan's per-rank graphs and their ops' tags; predictor inputs point
// into it.
struct PlanGraphs {
  std::vector<Shard> shards;  // planShards(): what OpTag::shard indexes
  std::deque<core::Graph> graphs;
  std::vector<std::unordered_map<int64_t, OpTag>> tags;  // per rank, by node id
};
PlanGraphs buildGraphs(const SweepSpec& spec, const std::vector<int>& owner, int64_t ranks);
PlanGraphs buildGraphs(const SweepSpec& spec, const std::vector<Placement>& place, int64_t ranks);
// Every rank predicted together (the multi-rank predictor, every rank's ops
// kept); the lookups of a Zipf table carry its index-reuse histogram.
predictors::MultiRankPrediction predictGraphs(const SweepSpec& spec, const PlanGraphs& g,
                                              const predictors::ModelSet& models,
                                              const predictors::PredictOptions& opts,
                                              int64_t world_size);

struct SweepOptions {
  predictors::PredictOptions predict;  // target device, system ...
  int64_t memory_limit_bytes = 0;     // per rank; 0: no limit known
  // Called after each plan with (done, total).
  std::function<void(size_t, size_t)> progress;
  // Up to full_max plans are all predicted jointly; beyond, every plan is
  // screened with the composed model and the best `verify` predicted jointly.
  size_t full_max = 50;
  size_t verify = 5;
  // The composed model when the caller fitted it already (strategy greedy
  // asks for its table costs); else fitted when needed.
  const ComposedModel* composed = nullptr;
};

// Predicts one plan.
PlanResult predictPlan(const SweepSpec& spec, const Plan& plan, const predictors::ModelSet& models,
                       const SweepOptions& options);

// Marks `res` infeasible when a rank's memory exceeds the limit; fills ranks' memory.
void checkMemory(const SweepSpec& spec, const SweepOptions& options, PlanResult* res);

// Every plan, ranked: feasible ones by predicted step (the jointly predicted
// first when the sweep was screened), then the infeasible.
std::vector<PlanResult> runSweep(const SweepSpec& spec, const std::vector<Plan>& plans,
                                 const predictors::ModelSet& models, const SweepOptions& options);

}  // namespace tracetwin::sweep
