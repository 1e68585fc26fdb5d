// The composed model: a plan's step from per-table and per-rank terms, to
// rank thousands of plans without building or simulating their graphs
// (docs/sweeps.md, "Speed"). The terms come from the joint prediction of one
// calibration plan (round robin): every table's ops, timed there on the rank
// that held it, are the same ops in any plan (a table's lookups cover the
// global batch wherever it lives); what no table owns is the same on every
// rank; the rank's pooled cat and reshapes scale with its tables' dims. The
// step then follows the step's three synchronising collectives:
//   step = max_r A_r + a2a_fwd + D + a2a_bwd + max_r C_r + allreduce + max_r E_r
// A: zero_grad, lookups, cat; D: the dense forward and backward (the same on
// every rank); C: table backward, the gradient bucket; E: SGD. It is a
// screen: the best plans it finds are predicted in full afterwards.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "predictors/models/model_set.h"
#include "predictors/simulation/predictor.h"
#include "sweep/sweep_run.h"
#include "sweep/sweep_spec.h"

namespace tracetwin::sweep {

struct ComposedModel {
  int64_t world_size = 1;
  std::vector<int64_t> dims;                      // per table
  std::vector<std::array<double, 4>> table_ms;    // per table, per StepPhase
  std::array<double, 4> common_ms{};              // per phase: ops of no table
  std::array<double, 4> per_dim_ms{};             // per phase: per unit of a rank's dims
  // Collectives' transfer in the calibration plan and the largest rank's
  // dims there: an all_to_all's transfer scales with the largest share.
  double a2a_fwd_ms = 0, a2a_bwd_ms = 0, allreduce_ms = 0;
  int64_t calibration_max_dims = 1;

  // Step and per-rank split of one plan (ms).
  PlanResult estimate(const Plan& plan) const;
  // Each table's lookups, backward and update (ms): what strategy greedy balances.
  std::vector<double> tableCosts() const;
};

// Fits the terms from the joint prediction of the round-robin plan.
ComposedModel calibrateComposed(const SweepSpec& spec, const predictors::ModelSet& models,
                                const predictors::PredictOptions& opts);

}  // namespace tracetwin::sweep
