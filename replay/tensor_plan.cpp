#include "replay/tensor_plan.h"

#include <algorithm>
#include <unordered_map>

namespace tracetwin::replay {

TensorPlan::Key TensorPlan::keyOf(const core::TensorValue& t) {
  return Key{t.tensor_id, t.storage_id, t.offset, t.numel, t.itemsize, t.device, t.shape};
}

int64_t TensorPlan::extentElements(const core::TensorValue& t) {
  int64_t extent = t.offset + t.numel;
  if (t.numel > 0 && t.strides.size() == t.shape.size()) {
    // Strided views (transposes, expands) reach further or less far than numel.
    int64_t last = 0;
    for (size_t d = 0; d < t.shape.size(); ++d) last += (t.shape[d] - 1) * t.strides[d];
    extent = std::max(extent, t.offset + last + 1);
  }
  return extent;
}

int32_t TensorPlan::useInput(const core::TensorValue& t, int64_t op_index, int32_t arg,
                             int32_t element) {
  auto key = keyOf(t);
  auto it = current_.find(key);
  if (it != current_.end()) {
    slots_[static_cast<size_t>(it->second)].last_use = op_index;
    return it->second;
  }
  SlotInfo info;
  info.meta = t;
  info.upfront = true;
  info.last_use = op_index;
  info.first_op = op_index;
  info.first_arg = arg;
  info.first_element = element;
  slots_.push_back(std::move(info));
  auto slot = static_cast<int32_t>(slots_.size() - 1);
  current_.emplace(std::move(key), slot);
  return slot;
}

int32_t TensorPlan::defineOutput(const core::TensorValue& t, int64_t op_index) {
  SlotInfo info;
  info.meta = t;
  info.def_op = op_index;
  info.last_use = op_index;
  slots_.push_back(std::move(info));
  auto slot = static_cast<int32_t>(slots_.size() - 1);
  current_[keyOf(t)] = slot;
  return slot;
}

void TensorPlan::setUpfrontStrides(int32_t slot, std::vector<int64_t> strides) {
  SlotInfo& info = slots_.at(static_cast<size_t>(slot));
  if (info.upfront && strides.size() == info.meta.shape.size())
    info.meta.strides = std::move(strides);
}

void TensorPlan::markTransients() {
  std::map<std::pair<int64_t, std::string>, int> upfront_views;
  for (const SlotInfo& info : slots_) {
    if (info.upfront) ++upfront_views[{info.meta.storage_id, info.meta.device}];
  }
  for (SlotInfo& info : slots_) {
    const core::TensorValue& m = info.meta;
    info.transient = info.upfront && m.shape.empty() && m.numel == 1 && m.offset == 0 &&
                     m.device.rfind("cpu", 0) == 0 && info.first_op >= 0 &&
                     info.first_op == info.last_use && upfront_views[{m.storage_id, m.device}] == 1;
  }
}

std::vector<std::vector<int32_t>> TensorPlan::releaseLists(int64_t op_count) const {
  std::vector<std::vector<int32_t>> lists(static_cast<size_t>(op_count));
  for (size_t s = 0; s < slots_.size(); ++s) {
    const SlotInfo& info = slots_[s];
    if ((info.upfront && !info.transient) || info.last_use < 0 || info.last_use >= op_count)
      continue;
    lists[static_cast<size_t>(info.last_use)].push_back(static_cast<int32_t>(s));
  }
  return lists;
}

namespace {

// Storage ids are reused after a free, so an upfront storage (live for the
// whole iteration) and a produced one with the same id are different memory.
struct StorageKey {
  int64_t id;
  std::string device;
  bool upfront;
  bool operator==(const StorageKey& o) const {
    return id == o.id && device == o.device && upfront == o.upfront;
  }
};
struct StorageKeyHash {
  size_t operator()(const StorageKey& k) const {
    return std::hash<int64_t>()(k.id) ^ (std::hash<std::string>()(k.device) << 1) ^
           size_t(k.upfront);
  }
};

void collect(const std::vector<core::Value>& values, std::vector<const core::TensorValue*>& out) {
  for (const auto& v : values) {
    core::forEachTensor(v, [&](const core::TensorValue& t) {
      if (t.defined()) out.push_back(&t);
    });
  }
}

}  // namespace

int64_t tracePeakBytes(const std::vector<const std::vector<core::Value>*>& op_inputs,
                       const std::vector<const std::vector<core::Value>*>& op_outputs) {
  const auto n = static_cast<int64_t>(op_inputs.size());
  TensorPlan plan;
  std::unordered_map<StorageKey, int64_t, StorageKeyHash> storage_bytes;
  std::vector<const core::TensorValue*> tensors;
  for (int64_t i = 0; i < n; ++i) {
    tensors.clear();
    collect(*op_inputs[static_cast<size_t>(i)], tensors);
    for (const auto* t : tensors) plan.useInput(*t, i);
    size_t first_output = tensors.size();
    collect(*op_outputs[static_cast<size_t>(i)], tensors);
    for (size_t k = first_output; k < tensors.size(); ++k) plan.defineOutput(*tensors[k], i);
  }
  for (const auto& s : plan.slots()) {
    auto& bytes = storage_bytes[StorageKey{s.meta.storage_id, s.meta.device, s.upfront}];
    bytes = std::max(bytes, TensorPlan::extentElements(s.meta) * s.meta.itemsize);
  }
  // Sweep: +bytes when a storage gains its first live slot, - when it loses its last.
  std::vector<std::vector<std::pair<StorageKey, int>>> events(static_cast<size_t>(n) + 1);
  std::unordered_map<StorageKey, int, StorageKeyHash> refs;
  int64_t live = 0;
  for (const auto& s : plan.slots()) {
    StorageKey key{s.meta.storage_id, s.meta.device, s.upfront};
    if (s.upfront) {
      if (refs[key]++ == 0) live += storage_bytes[key];
      continue;
    }
    events[static_cast<size_t>(s.def_op)].push_back({key, +1});
    events[static_cast<size_t>(s.last_use) + 1].push_back({key, -1});
  }
  int64_t peak = live;
  for (auto& at_op : events) {
    // Frees of the previous op happen before this op's allocations.
    std::stable_sort(at_op.begin(), at_op.end(),
                     [](const auto& a, const auto& b) { return a.second < b.second; });
    for (const auto& [key, delta] : at_op) {
      int& r = refs[key];
      if (delta > 0 && r++ == 0) live += storage_bytes[key];
      if (delta < 0 && --r == 0) live -= storage_bytes[key];
    }
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace tracetwin::replay
