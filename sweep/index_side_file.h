// The index-distribution side file of one rank's step (`sweep --measure` and
// `--emit-traces` write DIR/PLAN/rank{r}.index.yaml beside the trace): each
// embedding_bag of the rank's tables by its node id, with its table's Zipf
// exponent (none: uniform). `tracetwin replay 'DIR/PLAN/rank{rank}.et.json'
// --nproc N --index-distribution 'DIR/PLAN/rank{rank}.index.yaml'` then draws
// the indices as the sweep's prediction assumed (docs/sweeps.md).
#pragma once

#include <string>

#include "sweep/step_trace.h"
#include "sweep/sweep_spec.h"

namespace tracetwin::sweep {

// The file's text (predictors/specs/index_distribution_spec.h's format) for
// the rank step `step` of the plan placing the tables as `place`. A row-wise
// shard of a Zipf table past its first rows draws the tail of the
// distribution, (row_begin + j + 1)^-s, which the replay's Zipf draw (from
// the shard's first row) cannot express: it is written uniform, with a
// comment saying so (docs/sweeps.md, "Limits").
std::string indexDistributionYaml(const SweepSpec& spec, const std::vector<Placement>& place,
                                  const RankStep& step);

// The file's name beside the rank's trace: "rank{r}.index.yaml" ('{rank}' kept
// when r < 0, for the replay's per-rank pattern).
std::string indexSideFileName(int rank);

}  // namespace tracetwin::sweep
