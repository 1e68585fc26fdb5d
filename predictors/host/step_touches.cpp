#include "predictors/host/step_touches.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace tracetwin::predictors {

StepTouchesBuilder::StepTouchesBuilder(size_t expected_ops) {
  s_.first.reserve(expected_ops + 1);
  s_.touches.reserve(expected_ops * 3);
}

void StepTouchesBuilder::add(const core::Node& op) {
  StepTouches& s = s_;
  const size_t begin = s.touches.size();
  s.first.push_back(begin);
  for (bool input : {true, false}) {
    for (const core::Value& v : input ? op.inputs : op.outputs) {
      core::forEachTensor(v, [&](const core::TensorValue& t) {
        if (!t.defined() || t.storage_id == 0) return;
        s.touches.push_back({t.storage_id, 0, static_cast<double>(t.bytes()), input});
      });
    }
  }
  for (size_t k = begin; k < s.touches.size(); ++k) {
    StepTouch& out = s.touches[k];
    if (out.input) continue;
    out.produced = std::none_of(s.touches.begin() + static_cast<std::ptrdiff_t>(begin),
                                s.touches.begin() + static_cast<std::ptrdiff_t>(k),
                                [&](const StepTouch& t) { return t.storage == out.storage; });
  }
}

StepTouches StepTouchesBuilder::finish() && {
  StepTouches s = std::move(s_);
  s.first.push_back(s.touches.size());
  // Slots: traces number storages from a counter, so a table over their
  // range is usually small; a hash for ids spread wider.
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (const StepTouch& t : s.touches) {
    lo = std::min(lo, t.storage);
    hi = std::max(hi, t.storage);
  }
  constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  uint32_t next = 0;
  // Unsigned: ids of any sign, and a range no int64 holds, stay defined.
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (!s.touches.empty() && range < 4 * s.touches.size() + 4096) {
    std::vector<uint32_t> table(static_cast<size_t>(range) + 1, kNone);
    for (StepTouch& t : s.touches) {
      uint32_t& slot =
          table[static_cast<size_t>(static_cast<uint64_t>(t.storage) - static_cast<uint64_t>(lo))];
      if (slot == kNone) slot = next++;
      t.slot = slot;
    }
  } else {
    std::unordered_map<int64_t, uint32_t> table;
    table.reserve(s.touches.size());
    for (StepTouch& t : s.touches) {
      t.slot = table.try_emplace(t.storage, next).first->second;
      next = static_cast<uint32_t>(table.size());
    }
  }
  s.storages = next;
  return s;
}

StepTouches stepTouches(const std::vector<const core::Node*>& ops) {
  StepTouchesBuilder b(ops.size());
  for (const core::Node* op : ops) b.add(*op);
  return std::move(b).finish();
}

}  // namespace tracetwin::predictors
