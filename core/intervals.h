// The time a set of [start, end) intervals covers: the union of kernels on a
// GPU's streams, of ops in a simulated iteration, of collectives in flight.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

namespace tracetwin::core {

// Intervals already in order of start (ties in any order): overlaps count
// once; empty and inverted intervals count nothing. For callers that hold
// them sorted, or take several unions of one sorted set.
template <typename T>
T unionLengthOfSorted(const std::vector<std::pair<T, T>>& intervals) {
  T total{}, start{}, end{};
  bool open = false;
  for (const auto& [a, b] : intervals) {
    if (!(a < b)) continue;
    if (open && a <= end) {
      end = std::max(end, b);
      continue;
    }
    if (open) total += end - start;
    start = a;
    end = b;
    open = true;
  }
  if (open) total += end - start;
  return total;
}

// Overlaps count once; empty and inverted intervals count nothing.
template <typename T>
T unionLength(std::vector<std::pair<T, T>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  return unionLengthOfSorted(intervals);
}

}  // namespace tracetwin::core
