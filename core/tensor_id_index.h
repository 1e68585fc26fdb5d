// Internal to core: the index Graph::buildTensorTable keeps from tensor id to
// the newest tensor record with that id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tracetwin::core::detail {

// Tensor id -> newest record with that id: open addressing over a power-of-
// two table (ids are pointer-like; multiplicative hashing spreads them).
class TensorIdIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  explicit TensorIdIndex(size_t expected) { rehash(capacityFor(expected)); }

  // The slot holding `id`'s newest record, inserting kNone when absent.
  uint32_t& slot(int64_t id) {
    if (2 * (size_ + 1) > keys_.size()) rehash(keys_.size() * 2);
    size_t i = indexOf(id);
    while (values_[i] != kEmpty) {
      if (keys_[i] == id) return values_[i];
      i = (i + 1) & mask_;
    }
    ++size_;
    keys_[i] = id;
    values_[i] = kNone;
    return values_[i];
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX - 1;  // records never reach it
  static size_t capacityFor(size_t n) {
    size_t c = 64;
    while (c < 2 * n) c *= 2;
    return c;
  }
  size_t indexOf(int64_t id) const {
    return static_cast<size_t>((static_cast<uint64_t>(id) * 0x9e3779b97f4a7c15ULL) >> shift_);
  }
  void rehash(size_t capacity) {
    std::vector<int64_t> old_keys = std::move(keys_);
    std::vector<uint32_t> old_values = std::move(values_);
    keys_.assign(capacity, 0);
    values_.assign(capacity, kEmpty);
    mask_ = capacity - 1;
    shift_ = 64;
    for (size_t c = capacity; c > 1; c /= 2) --shift_;
    for (size_t j = 0; j < old_keys.size(); ++j) {
      if (old_values[j] == kEmpty) continue;
      size_t i = indexOf(old_keys[j]);
      while (values_[i] != kEmpty) i = (i + 1) & mask_;
      keys_[i] = old_keys[j];
      values_[i] = old_values[j];
    }
  }

  std::vector<int64_t> keys_;
  std::vector<uint32_t> values_;  // kEmpty: free slot
  size_t mask_ = 0;
  int shift_ = 64;
  size_t size_ = 0;
};

}  // namespace tracetwin::core::detail
