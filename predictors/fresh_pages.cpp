#include "predictors/fresh_pages.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace tracetwin::predictors {

double freshMappedBytes(const core::Node& op) {
  // Every op of a graph comes here, and almost none has such an output:
  // look before allocating anything.
  bool large = false;
  for (const core::Value& v : op.outputs) {
    core::forEachTensor(v, [&](const core::TensorValue& t) {
      large = large || (t.defined() && t.bytes() >= kMmapThresholdBytes);
    });
  }
  if (!large) return 0;
  std::vector<int64_t> inputs;
  for (const core::Value& v : op.inputs)
    core::forEachTensor(v, [&](const core::TensorValue& t) { inputs.push_back(t.storage_id); });
  std::vector<std::pair<int64_t, int64_t>> fresh;  // storage -> largest tensor bytes
  for (const core::Value& v : op.outputs) {
    core::forEachTensor(v, [&](const core::TensorValue& t) {
      if (!t.defined() || t.bytes() < kMmapThresholdBytes) return;
      if (std::find(inputs.begin(), inputs.end(), t.storage_id) != inputs.end()) return;
      auto it = std::find_if(fresh.begin(), fresh.end(),
                             [&](const auto& f) { return f.first == t.storage_id; });
      if (it == fresh.end()) {
        fresh.push_back({t.storage_id, t.bytes()});
      } else {
        it->second = std::max(it->second, t.bytes());
      }
    });
  }
  double bytes = 0;
  for (const auto& f : fresh) bytes += double(f.second);
  return bytes;
}

}  // namespace tracetwin::predictors
