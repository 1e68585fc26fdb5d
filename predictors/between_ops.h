// What a CPU replay's iteration holds beyond the sum of its ops' median
// times: the loop itself, freeing each produced tensor after its last use,
// and the skew of noisy timings (an iteration sums the ops' actual times,
// whose mean sits above their median on a shared host). A 5,000-add probe
// put the loop at 0.06-0.08 us per op; real graphs measured 0.9-1.7 us per
// op (mobilenet_v3 2.3 ms of a 60 ms iteration, none of it predicted).
// Calibration fits iteration time minus the ops' own times over its
// microbenchmark graphs as  a * ops + b * produced tensors + c * op time
// (weighted least squares, every term >= 0); prediction adds
// a + b * (tensors the op produces) + c * (its predicted time) to each op as
// its T1 on a CPU device.
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph.h"
#include "predictors/overheads.h"

namespace tracetwin::predictors {

// T1 keys of the per-produced-tensor term and of the share of op time
// (median_us holds the fraction), beside kAllOps, the per-op term.
inline constexpr const char* kPerOutputTensor = "__per_output__";
inline constexpr const char* kShareOfOpTime = "__share_of_op_time__";

struct BetweenOpsSample {
  double ops = 0;           // ops replayed in one iteration
  double produced = 0;      // tensors they produced (freed within the iteration)
  double op_us = 0;         // the sum of their median times
  double between_us = 0;    // iteration time minus the ops' own times
  double iteration_us = 0;  // the iteration (its noise scales the weight)
};

struct BetweenOpsFit {
  double per_op_us = 0;
  double per_output_us = 0;
  double share_of_op_time = 0;
  int64_t samples = 0;
  bool ok = false;  // false: too few samples (< 8) or a degenerate system
};

BetweenOpsFit fitBetweenOps(const std::vector<BetweenOpsSample>& samples);

// Writes the fit as T1 entries kAllOps and kPerOutputTensor, with a source line.
void applyBetweenOps(const BetweenOpsFit& fit, OverheadTable* table);

// Output tensors of `node` that are not one of its inputs (an in-place op
// returns its `self`): what the replay allocates for it and frees later.
int producedTensors(const core::Node& node);

}  // namespace tracetwin::predictors
