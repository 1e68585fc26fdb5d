// What a CPU replay's iteration holds beyond the sum of its ops' median
// times: the loop itself, freeing each produced tensor after its last use,
// and the skew of noisy timings (an iteration sums the ops' actual times,
// whose mean sits above their median on a shared host). A 5,000-add probe
// put the loop at 0.06-0.08 us per op; real graphs measured 0.9-1.7 us per
// op (mobilenet_v3 2.3 ms of a 60 ms iteration, none of it predicted).
// Calibration fits iteration time minus the ops' own times over its
// microbenchmark graphs as  a * ops + b * produced tensors + c * op time
// + d * wrapped numbers (weighted least squares, every term >= 0);
// prediction adds a + b * (tensors the op produces) + c * (its predicted
// time) + d * (Python numbers wrapped for it) to each op as its T1 on a CPU
// device. The replay creates each wrapped number right before its op, as
// Python's binding does (replay/tensor_plan.h): ~0.29 us apiece here, 1.4 ms
// of adds5k's 7.9 ms.
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph.h"
#include "predictors/host/overheads.h"

namespace tracetwin::predictors {

// T1 keys of the per-produced-tensor term and of the share of op time
// (median_us holds the fraction), beside kAllOps, the per-op term.
inline constexpr const char* kPerOutputTensor = "__per_output__";
inline constexpr const char* kShareOfOpTime = "__share_of_op_time__";
inline constexpr const char* kPerWrappedNumber = "__per_wrapped_number__";

struct BetweenOpsSample {
  double ops = 0;           // ops replayed in one iteration
  double produced = 0;      // tensors they produced (freed within the iteration)
  double op_us = 0;         // the sum of their median times
  double wrapped = 0;       // Python numbers wrapped into tensors for them (wrappedNumbers)
  double between_us = 0;    // iteration time minus the ops' own times
  double iteration_us = 0;  // the iteration (its noise scales the weight)
};

struct BetweenOpsFit {
  double per_op_us = 0;
  double per_output_us = 0;
  double share_of_op_time = 0;
  double per_wrapped_us = 0;
  int64_t samples = 0;
  bool ok = false;  // false: too few samples (< 8) or a degenerate system
};

BetweenOpsFit fitBetweenOps(const std::vector<BetweenOpsSample>& samples);

// Writes the fit as T1 entries kAllOps and kPerOutputTensor, with a source line.
void applyBetweenOps(const BetweenOpsFit& fit, OverheadTable* table);

// Output tensors of `node` that are not one of its inputs (an in-place op
// returns its `self`): what the replay allocates for it and frees later.
int producedTensors(const core::Node& node);

// Per op of `ops` (in execution order): its inputs that are Python numbers
// wrapped into a tensor for the call, i.e. 0-dim one-element CPU tensors that
// no earlier op of `ops` produced. The replay's own test (transient slots,
// replay/tensor_plan.h) also sets aside the rare one that shares an address
// with a view in use; this one, without LibTorch, does not.
std::vector<int> wrappedNumbers(const std::vector<const core::Node*>& ops);

}  // namespace tracetwin::predictors
