// The composed model: a plan's step from per-table and per-rank terms, to
// rank thousands of plans without building or simulating their graphs
// (docs/sweeps.md, "Speed"). The terms come from the round-robin plan's
// graphs: every table's ops are the same ops in any plan (a table's lookups
// cover the global batch wherever it lives); what no table owns is the same
// on every rank; the rank's pooled cat and reshapes scale with its tables'
// dims. The step then follows the step's three synchronising collectives:
//   step = max_r A_r + a2a_fwd + D + a2a_bwd + max_r C_r + allreduce + max_r E_r
// A: zero_grad, lookups, cat; D: the dense forward and backward (the same on
// every rank); C: table backward, the gradient bucket; E: SGD.
// What the joint prediction does for CPU ranks on one host, it does too:
// - each phase runs under processor sharing of the host's cores (the ranks
//   start it together, at the collective before it), with the ops' memory
//   contention, instead of max_r;
// - a rank's ops see its share of the last-level cache, which grows with its
//   part of the tables' traffic: its terms are interpolated between round
//   robin and every table on one rank;
// - with the comm model's arrival jitter, a phase ends at the expected
//   latest arrival.
// It is a screen: the best plans it finds are predicted in full afterwards.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "predictors/comm/sync_jitter.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/predictor.h"
#include "sweep/sweep_run.h"
#include "sweep/sweep_spec.h"

namespace tracetwin::sweep {

// Each table's ops' times (ms) per StepPhase in a calibration plan's joint
// prediction, and the same weighted by the ops' memory shares (the time
// their bytes take at the memory bandwidth: what co-located ranks contend
// for).
struct TableTerms {
  std::vector<std::array<double, 4>> ms, memory_ms;  // per table
};

// A calibration rank's other ops: those every rank runs (common) and those
// that scale with its tables' dims (per dim), at its part of the tables'
// traffic.
struct RankTerms {
  double part = 0;
  bool has_dims = false;
  std::array<double, 4> common_ms{}, common_memory_ms{};
  std::array<double, 4> per_dim_ms{}, per_dim_memory_ms{};
};

struct ComposedModel {
  int64_t world_size = 1;
  std::vector<int64_t> dims;  // per table
  // The terms at two calibration plans, round robin ("spread") and every
  // table on rank 0 ("gathered"). Between them a rank's terms follow its part
  // of the tables' traffic, which gives it its share of a CPU host's
  // last-level cache (docs/sweeps.md, "Speed"); equal without a shared host.
  TableTerms spread, gathered;
  std::vector<double> table_part;   // per table: its part of the tables' traffic (sums to 1)
  std::vector<double> spread_part;  // per table: the part its round-robin owner held
  // Every calibration rank's other terms, by ascending part: round robin's
  // ranks and, gathered, rank 0 (part 1) and a rank with no table (part 0).
  std::vector<RankTerms> rank_terms;
  // Collectives' transfer in the calibration plan and the largest rank's
  // dims there: an all_to_all's bytes scale with the largest share.
  double a2a_fwd_ms = 0, a2a_bwd_ms = 0, allreduce_ms = 0;
  int64_t calibration_max_dims = 1;
  // The all_to_alls' transfer against the calibration plan's, by the largest
  // rank's dims (index: dims, up to every table's): the comm model's ratio at
  // the bytes those dims send (its latency does not scale with the bytes).
  // Empty where the message's bytes are unknown: the transfer scales with the dims.
  std::vector<double> a2a_scale_by_max_dims;
  // CPU ranks on one host share its cores (docs/prediction.md "Co-located
  // ranks"). 0: a device per rank.
  double cores = 0;
  double threads = 1;             // intra-op threads of each rank's ops
  double memory_contention = 0;   // kappa of the device (DeviceSpec::memory_contention)
  predictors::SyncJitter jitter;  // the comm model's, as the joint prediction takes it

  // Step and per-rank split of one plan (ms).
  PlanResult estimate(const Plan& plan) const;
  // Each table's lookups, backward and update (ms): what strategy greedy balances.
  std::vector<double> tableCosts() const;
};

// Fits the terms from the round-robin plan's graphs and joint prediction.
ComposedModel calibrateComposed(const SweepSpec& spec, const predictors::ModelSet& models,
                                const predictors::PredictOptions& opts);

}  // namespace tracetwin::sweep
