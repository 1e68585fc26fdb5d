#include "calibration/repeat_pooling.h"

#include <algorithm>

#include "core/statistics.h"

namespace tracetwin::calibration {

double pooledUs(const std::vector<double>& us, RepeatPooling pooling) {
  if (pooling == RepeatPooling::kFastest) return *std::min_element(us.begin(), us.end());
  return core::median(us);
}

std::string poolingName(RepeatPooling pooling) {
  return pooling == RepeatPooling::kFastest ? "fastest" : "median";
}

}  // namespace tracetwin::calibration
