#include "replay/tensor_plan.h"

#include <algorithm>
#include <unordered_map>

namespace tracetwin::replay {

TensorPlan::Key TensorPlan::keyOf(const core::TensorValue& t) {
  return Key{t.tensor_id, t.storage_id, t.offset, t.numel, t.itemsize, t.device, t.shape, t.dtype};
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

namespace {

// A 0-dim CPU tensor of one element: what a wrapped Python number looks like.
bool isCpuScalar(const core::TensorValue& t) {
  return t.shape.empty() && t.numel == 1 && t.device.rfind("cpu", 0) == 0;
}

}  // namespace

int32_t TensorPlan::useInput(const core::TensorValue& t, int64_t op_index, int32_t arg,
                             int32_t element) {
  auto key = keyOf(t);
  auto it = current_.find(key);
  if (it != current_.end()) {
    SlotInfo& info = slots_[static_cast<size_t>(it->second)];
    info.last_use = op_index;
    if (info.upfront && isCpuScalar(info.meta) &&
        (info.scalar_reads.empty() || info.scalar_reads.back() != op_index))
      info.scalar_reads.push_back(op_index);
    return it->second;
  }
  SlotInfo info;
  info.meta = t;
  info.upfront = true;
  info.last_use = op_index;
  info.first_op = op_index;
  info.first_arg = arg;
  info.first_element = element;
  if (isCpuScalar(t)) info.scalar_reads.push_back(op_index);
  markSparse(info);
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
  markSparse(info);
  slots_.push_back(std::move(info));
  auto slot = static_cast<int32_t>(slots_.size() - 1);
  current_[keyOf(t)] = slot;
  return slot;
}

void TensorPlan::markSparse(SlotInfo& info) const {
  if (info.meta.defined() || !core::sparseCandidate(info.meta)) return;
  auto it = sparse_.find(info.meta.tensor_id);
  if (it == sparse_.end()) return;
  info.sparse = true;
  info.sparse_layout = it->second;
}

void TensorPlan::setUpfrontStrides(int32_t slot, std::vector<int64_t> strides) {
  SlotInfo& info = slots_.at(static_cast<size_t>(slot));
  if (info.upfront && strides.size() == info.meta.shape.size())
    info.meta.strides = std::move(strides);
}

void TensorPlan::markTransients() {
  // Upfront views by storage. Addresses are reused, so only a view in use
  // when an op reads the candidate shares its memory (see slot_table.cpp):
  // another candidate at its reads, any other view over its first to last use.
  std::map<std::pair<int64_t, std::string>, std::vector<const SlotInfo*>> upfront_views;
  for (const SlotInfo& info : slots_) {
    if (info.upfront) upfront_views[{info.meta.storage_id, info.meta.device}].push_back(&info);
  }
  auto candidate = [](const SlotInfo& info) {
    return info.upfront && info.meta.offset == 0 && !info.scalar_reads.empty();
  };
  auto inUseAt = [&](const SlotInfo& other, int64_t op) {
    if (candidate(other))
      return std::binary_search(other.scalar_reads.begin(), other.scalar_reads.end(), op);
    return other.first_op <= op && op <= other.last_use;
  };
  for (SlotInfo& info : slots_) {
    info.transient = candidate(info);
    if (!info.transient) continue;
    for (const SlotInfo* other : upfront_views[{info.meta.storage_id, info.meta.device}]) {
      if (other == &info) continue;
      for (int64_t op : info.scalar_reads) {
        if (inUseAt(*other, op)) info.transient = false;
      }
    }
  }
}

void TensorPlan::markNonNegative(int32_t slot) {
  SlotInfo& info = slots_.at(static_cast<size_t>(slot));
  if (info.upfront) info.non_negative = true;
}

std::vector<std::vector<int32_t>> TensorPlan::releaseLists(int64_t op_count) const {
  std::vector<std::vector<int32_t>> lists(static_cast<size_t>(op_count));
  for (size_t s = 0; s < slots_.size(); ++s) {
    const SlotInfo& info = slots_[s];
    if (info.transient) {  // released after each op that reads it
      for (int64_t op : info.scalar_reads) {
        if (op >= 0 && op < op_count) lists[size_t(op)].push_back(static_cast<int32_t>(s));
      }
      continue;
    }
    if (info.upfront || info.last_use < 0 || info.last_use >= op_count) continue;
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
