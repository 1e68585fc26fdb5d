// Robust summaries of repeated measurements, shared by the replayer, the
// fitting code and calibration.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace tracetwin::core {

// The median (the mean of the two middle values for an even count); 0 for no
// values, so an op that never ran reports 0 rather than reading past the end.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const size_t mid = values.size() / 2;
  const auto mid_it = values.begin() + static_cast<std::ptrdiff_t>(mid);
  std::nth_element(values.begin(), mid_it, values.end());
  const double upper = *mid_it;
  if (values.size() % 2 == 1) return upper;
  return 0.5 * (*std::max_element(values.begin(), mid_it) + upper);
}

// The arithmetic mean; 0 for no values. Where a host stalls a share of the
// iterations (a scheduler tick in a collective), the median jumps between the
// modes and the mean is the expected time a job of many steps accumulates.
inline double mean(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  double sum = 0.0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

// The q-quantile (0 <= q <= 1) by linear interpolation between order
// statistics (numpy's default); 0 for no values.
inline double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double at = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(at);
  const size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (at - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

}  // namespace tracetwin::core
