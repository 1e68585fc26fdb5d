// `tracetwin predict` for several ranks: the arguments it shares with the
// single-rank command, the joint prediction of every rank of a job
// ('DIR/rank{rank}.et.json.gz') and the per-rank report.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/graph.h"
#include "core/kineto/linker.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/joint_prediction.h"
#include "predictors/simulation/predictor.h"

namespace tracetwin::cli {

struct PredictArgs {
  std::string trace;
  std::string index_distribution;  // --index-distribution ({rank}: one per rank; cli/index_distribution_option.h)
  std::string models;
  std::string device_spec;
  std::string overheads;
  std::string kernel_times;
  std::string json_out;
  std::string comm_link;
  std::string system;  // configs/systems/*.yaml
  std::string timeline;  // --timeline FILE (one rank's prediction)
  std::string rank_starts = "together";
  std::string overhead_stat;  // empty: the table's "statistic", else the median
  int64_t world_size = 0;  // 0: not given
  double host_scale = 1.0;  // the host's CPU-side costs (T1-T5) times this
  double host_cores = 0;    // CPU ranks share this many cores (0: the device's; < 0: apart)
};

// Per-family totals, breakdown, unmodelled ops and notes of one prediction.
void printPredictionDetail(const predictors::Prediction& p);
// The per-rank table, the step, the straggler and the collectives.
void printRanks(const predictors::MultiRankPrediction& m);
// Links `kineto` with `graph` and puts its ops' recorded kernel times into
// `opts` (predict --kernel-times); throws UsageError for a CPU destination.
core::kineto::LinkedTimeline recordedKernels(const core::Graph& graph, const std::string& kineto,
                                             const predictors::ModelSet& models,
                                             predictors::PredictOptions* opts);
void writeJson(const nlohmann::json& j, const std::string& path);
// --device-spec, --system and --overhead-stat into `opts`: the system's
// device is the target unless --device-spec names another.
void applyTargets(const PredictArgs& args, predictors::PredictOptions* opts);

// `predict 'DIR/rank{rank}.et.json.gz' ...`: every rank simulated together.
void predictRanksCommand(const PredictArgs& args);

}  // namespace tracetwin::cli
