#include "predictors/cache_reuse.h"

#include <algorithm>
#include <unordered_map>

namespace tracetwin::predictors {
namespace {

struct Touch {
  int64_t storage;
  double bytes;
  bool input;
};

}  // namespace

std::vector<ColdBytes> coldBytes(const std::vector<const core::Node*>& ops, double cache_bytes) {
  std::vector<ColdBytes> cold(ops.size());
  if (cache_bytes <= 0) return cold;
  // Every op's tensors once (this runs for every op of a 100k-op graph).
  std::vector<Touch> touches;
  std::vector<size_t> first(ops.size() + 1, 0);
  touches.reserve(ops.size() * 3);
  for (size_t i = 0; i < ops.size(); ++i) {
    first[i] = touches.size();
    for (bool input : {true, false}) {
      for (const core::Value& v : input ? ops[i]->inputs : ops[i]->outputs) {
        core::forEachTensor(v, [&](const core::TensorValue& t) {
          if (t.defined() && t.storage_id != 0) {
            touches.push_back({t.storage_id, static_cast<double>(t.bytes()), input});
          }
        });
      }
    }
  }
  first[ops.size()] = touches.size();
  std::unordered_map<int64_t, double> last_touch;  // storage -> traffic clock at its last touch
  last_touch.reserve(touches.size());
  double clock = 0;
  // Pass 0 replays the iteration once so pass 1 sees the previous one.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < ops.size(); ++i) {
      double bytes = 0;
      for (size_t k = first[i]; k < first[i + 1]; ++k) {
        const Touch& t = touches[k];
        double& last = last_touch.try_emplace(t.storage, -1.0).first->second;
        // Touched already by this op (an in-place op's output, a tensor
        // passed twice): no new lines in the cache, nothing cold.
        if (last == clock) continue;
        if (pass == 1 && last >= 0) {
          const double since = std::max(0.0, clock - last - t.bytes);
          const double cached = std::clamp(cache_bytes - since, 0.0, t.bytes);
          (t.input ? cold[i].inputs : cold[i].outputs) += t.bytes - cached;
          if (t.input && t.bytes > 0) cold[i].input_tensors += (t.bytes - cached) / t.bytes;
        }
        last = clock;
        bytes += t.bytes;
      }
      clock += bytes;
    }
  }
  return cold;
}

}  // namespace tracetwin::predictors
