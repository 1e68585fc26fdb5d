// `tracetwin compare TRACE --nproc N --models DIR`: the distributed replay
// of a job (one process per rank, Gloo or NCCL) and its joint prediction
// (predictors/simulation/joint_prediction.h) side by side, per rank and per
// op family, with the collectives' transfer and the waiting for peers as
// rows of their own.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tracetwin::cli {

struct CompareRanksArgs {
  std::string trace;  // with {rank}: each rank's trace; without: the same trace on every rank
  std::string models;
  int nproc = 2;
  std::string device = "cpu";
  int warmup = 2, iters = 5, settle = 1;
  double comm_timeout_s = 300;
  int threads = 0;                         // --threads of the replay (0: its default)
  double host_cores = 0;                   // the prediction's (predictors::MultiRankOptions)
  std::vector<std::string> op_libraries;  // --op-library of the replay, each
  std::string json_out;
  // --timeline: every rank's replay and joint prediction, each rank its own
  // group (the replays from the ranks' own reports, --rank-reports).
  std::string timeline;
  // --index-distribution ('{rank}': each rank's), given to the replay and
  // to each rank's prediction.
  std::string index_distribution;
  // The calibration's mm probe before and after the replay, against the
  // models' (calibration/host_speed.h): CPU replays of CPU models.
  bool host_speed_check = true;
  // --core-tolerance: > 0 runs the replay on steady cores (cli/core_gate.h).
  double core_tolerance = 0;
};

void compareRanks(const CompareRanksArgs& args);

// A prediction's signed error against a measurement, percent (0 when nothing
// was measured): the error column of compare's tables.
double errorPct(double predicted, double measured);

// Rows per rank and family from a merged replay report (`replay --nproc
// --json-out`) and a multi-rank prediction's JSON (`multiRankToJson`), as
// `compare --nproc` writes them.
nlohmann::json compareRanksJson(const nlohmann::json& replayed, const nlohmann::json& predicted,
                                bool on_gpu);

}  // namespace tracetwin::cli
