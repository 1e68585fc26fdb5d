#include "predictors/host/reuse_distance.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tracetwin::predictors {

std::vector<double> inputReuseBytes(const std::vector<const core::Node*>& ops,
                                    double private_cache_bytes) {
  return inputReuseBytes(stepTouches(ops), private_cache_bytes);
}

std::vector<double> inputReuseBytes(const StepTouches& step, double private_cache_bytes,
                                    double* iteration_brought) {
  const size_t n = step.ops();
  std::vector<double> reuse(n, 0.0);
  struct Last {
    double traffic = -1;  // every touch's bytes before the op of the last touch; < 0: none yet
    double clock = 0;     // bytes brought in before that op
    double brought = 0;   // of them, by the touch itself
    size_t op = SIZE_MAX;
  };
  std::vector<Last> last(step.storages);
  double traffic = 0;  // every touch's bytes so far
  double clock = 0;    // bytes brought into the private cache so far
  // Pass 0 touches everything from beyond (a cold start); pass 1 brings in
  // what a repeating iteration does, and pass 2 reads distances against it.
  constexpr size_t kPasses = 3;
  double clock_before_last_pass = 0;
  for (size_t pass = 0; pass < kPasses; ++pass) {
    if (pass == kPasses - 1) clock_before_last_pass = clock;
    for (size_t i = 0; i < n; ++i) {
      const size_t op = pass * n + i;
      double weighted = 0, bytes = 0, op_traffic = 0, op_brought = 0;
      for (size_t k = step.first[i]; k < step.first[i + 1]; ++k) {
        const StepTouch& t = step.touches[k];
        Last& l = last[t.slot];
        if (l.op == op) continue;  // passed twice, or written in place: touched already
        double in = t.bytes;
        if (l.traffic >= 0) {
          // The private cache as an LRU one over every touch since the last.
          const double since = std::max(0.0, traffic - l.traffic - t.bytes);
          if (private_cache_bytes > 0)
            in = std::clamp(since + t.bytes - private_cache_bytes, 0.0, t.bytes);
          if (pass == kPasses - 1 && t.input) {
            weighted += t.bytes * (std::max(0.0, clock - l.clock - l.brought) + t.bytes / 2);
            bytes += t.bytes;
          }
        }
        l = {traffic, clock, in, op};
        op_traffic += t.bytes;
        op_brought += in;
      }
      if (bytes > 0) reuse[i] = weighted / bytes;
      traffic += op_traffic;
      clock += op_brought;
    }
  }
  if (iteration_brought != nullptr) *iteration_brought = clock - clock_before_last_pass;
  return reuse;
}

double aloneReuseBytes(const core::Node& op, double private_cache_bytes) {
  // inputReuseBytes({&op}) in closed form (this runs for every part of an op
  // predicted as the sum of its children): between two calls each touch
  // brings in what the op's other tensors pushed out of the private cache.
  struct Seen {
    int64_t storage;
    double bytes;
    bool input;
  };
  std::vector<Seen> seen;  // the op's storages once each, as stepTouches and the walk count them
  double total = 0;
  for (bool input : {true, false}) {
    for (const core::Value& v : input ? op.inputs : op.outputs) {
      core::forEachTensor(v, [&](const core::TensorValue& t) {
        if (!t.defined() || t.storage_id == 0) return;
        for (const Seen& s : seen)
          if (s.storage == t.storage_id) return;
        seen.push_back({t.storage_id, static_cast<double>(t.bytes()), input});
        total += static_cast<double>(t.bytes());
      });
    }
  }
  auto broughtBy = [&](double b) {
    return private_cache_bytes > 0 ? std::clamp(total - private_cache_bytes, 0.0, b) : b;
  };
  double all_brought = 0;
  for (const Seen& s : seen) all_brought += broughtBy(s.bytes);
  double weighted = 0, input_bytes = 0;
  for (const Seen& s : seen) {
    if (!s.input) continue;
    weighted += s.bytes * (all_brought - broughtBy(s.bytes) + s.bytes / 2);
    input_bytes += s.bytes;
  }
  return input_bytes > 0 ? weighted / input_bytes : 0.0;
}

}  // namespace tracetwin::predictors
