// `tracetwin sweep ... --measure`: the ranked plans run for real through the
// distributed replay (`tracetwin replay 'DIR/PLAN/rank{rank}.et.json' --nproc
// world_size`, a subprocess: `tracetwin` itself links no LibTorch), plans
// alternated round by round so host drift hits all alike; measured steps
// beside the predictions, pick-best and Kendall tau (docs/sweeps.md).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sweep/sweep_run.h"
#include "sweep/sweep_spec.h"

namespace tracetwin::cli {

struct MeasureArgs {
  bool all = false;       // every feasible plan; else the first `top`
  int64_t top = 20;
  int64_t rounds = 3;
  // Measured replay iterations per round: enough for the mean of a step
  // that a scheduler tick hits in some iterations (docs/distributed.md).
  int64_t iters = 20;
  // replay --settle: untimed iterations between the refill of the upfront
  // values (tables, weights) and each timed one. More than the replay's 1:
  // the refill rewrites every table of a rank, and with three 64 MB tables
  // one iteration after it was not steady, which made the plans that spread
  // tables measure slower than in PyTorch (docs/sweeps.md, "Session 56").
  int64_t settle = 4;
  std::string device = "cpu";  // replay --device: cpu, or cuda (a GPU per rank, NCCL)
  std::string traces_dir;  // where the plans' traces go (a temporary directory when empty)
  // > 1 on a CPU: each plan's round waits until every core reads within
  // this of the fast phase and runs again when one slowed during it
  // (calibration/steady_cores_run.h); 0: off.
  double core_tolerance = 0;
  // Racing: after `rounds` over every plan, this many more rounds of the
  // plans measured within `contender_within` of the fastest (0: none). Where
  // the pick-best is decided the top plans are often within the host's
  // drift of each other, and a round of two plans costs less than one of five.
  // 15%: set 4 of configs/sweeps/host3 spread its rounds 12% with every core
  // steady (docs/sweeps.md, "Session 58").
  int64_t contender_rounds = 0;
  double contender_within = 0.15;
};

// Throws UsageError for options that cannot go together (before any work).
void checkMeasureArgs(const MeasureArgs& args);

// Measures the chosen plans of `ranked`, prints the comparison and returns
// it as JSON {plans: [{name, predicted_ms, measured_ms, rounds_ms,
// rounds_core_slowdown (with core_tolerance)}], rounds, iters, settle,
// contenders (with contender_rounds: {within, rounds, plans, medians_before}),
// best_predicted, best_measured, pick_best, gap, kendall_tau, paired_rounds
// (two plans or more: sweep::compareCommonRounds of the measured best against
// the predicted best or the runner-up), core_gate (with core_tolerance)}.
nlohmann::json measurePlans(const sweep::SweepSpec& spec,
                            const std::vector<sweep::PlanResult>& ranked,
                            const MeasureArgs& args);

}  // namespace tracetwin::cli
