// Ops recorded under torch.autocast (core/autocast.h) are predicted as what
// they ran: the op on the cast tensors, in the dtype it computed in (a bf16
// GEMM or convolution at the device's bf16 rate, peak_tflops.bfloat16: 989
// TFLOP/s on an H100 against 67 for fp32), plus the casts themselves,
// memory-bound copies predicted by the copy family's model. Features of the
// op's own recorded arguments said fp32 with 4-byte operands: a 15x slower
// GEMM on an H100, and on this CPU (Debian's 1.13, generic fp32 BLAS against
// oneDNN's bf16 kernels) 3-9x. Predictor-private.
#pragma once

#include <functional>
#include <vector>

#include "core/graph.h"
#include "predictors/simulation/op_record.h"

namespace tracetwin::predictors {

// The node whose features model `node`: its inner autocast call when it was
// recorded under autocast (its casts appended to `casts`), else `node`.
const core::Node& modelledNode(const core::Graph& graph, const core::Node& node,
                               std::vector<const core::Node*>* casts);

// Adds to each record's prediction the predicted time of its casts
// (`casts[i]` for `recs[i]`). `predict` predicts the device times of the
// records built here (their features set, shape hashes not) with
// predictGraph's family models; the model label gains "+casts:N".
void addCastTimes(std::vector<OpRecord>& recs,
                  const std::vector<std::vector<const core::Node*>>& casts,
                  const std::function<void(std::vector<OpRecord>&)>& predict);

}  // namespace tracetwin::predictors
