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

}  // namespace tracetwin::core
