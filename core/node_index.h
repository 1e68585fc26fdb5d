// Node id -> position in the Graph's id-sorted node array. ETs number their
// nodes nearly densely (the 27 MB trace of issue 38: ids 1..33720 for 28.8k
// nodes), so a table indexed by id - lowest id answers with one load; ids
// spread wider than 4x the node count fall back to a hash map. The table was
// ~2% of `inspect`'s CPU as an unordered_map (one allocation per node, and a
// hashed lookup per parent/child link in finalize's walks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

namespace tracetwin::core::detail {

class NodeIndex {
 public:
  static constexpr size_t kAbsent = std::numeric_limits<size_t>::max();

  // For `count` distinct ids in [lo, hi], inserted next.
  void reset(int64_t lo, int64_t hi, size_t count) {
    slots_.clear();
    map_.clear();
    lo_ = lo;
    const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
    dense_ = count > 0 && range != 0 && range <= 4 * static_cast<uint64_t>(count) + 64;
    if (dense_) {
      slots_.assign(range, kNone);
    } else {
      map_.reserve(count);
    }
  }
  void insert(int64_t id, size_t position) {
    if (dense_) {
      slots_[static_cast<uint64_t>(id) - static_cast<uint64_t>(lo_)] =
          static_cast<uint32_t>(position);
    } else {
      map_.emplace(id, position);
    }
  }
  size_t find(int64_t id) const {
    if (dense_) {
      const uint64_t k = static_cast<uint64_t>(id) - static_cast<uint64_t>(lo_);
      if (k >= slots_.size() || slots_[k] == kNone) return kAbsent;
      return slots_[k];
    }
    auto it = map_.find(id);
    return it == map_.end() ? kAbsent : it->second;
  }

 private:
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  bool dense_ = false;
  int64_t lo_ = 0;
  std::vector<uint32_t> slots_;  // dense: id - lo_ -> position, or kNone
  std::unordered_map<int64_t, size_t> map_;  // otherwise
};

}  // namespace tracetwin::core::detail
