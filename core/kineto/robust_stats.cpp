#include "core/kineto/robust_stats.h"

#include <algorithm>
#include <cmath>

namespace tracetwin::core::kineto {

double quantileSorted(const std::vector<double>& sorted, double q) {
  double pos = q * static_cast<double>(sorted.size() - 1);
  auto lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

RobustStat robustStat(std::vector<double> samples) {
  RobustStat stat;
  if (samples.empty()) return stat;
  std::sort(samples.begin(), samples.end());
  stat.mean = 0;
  for (double s : samples) stat.mean += s;
  stat.mean /= double(samples.size());
  double q1 = quantileSorted(samples, 0.25), q3 = quantileSorted(samples, 0.75);
  double fence = 1.5 * (q3 - q1);
  std::vector<double> kept;
  kept.reserve(samples.size());
  for (double s : samples)
    if (s >= q1 - fence && s <= q3 + fence) kept.push_back(s);
  stat.outliers = static_cast<int64_t>(samples.size() - kept.size());
  stat.count = static_cast<int64_t>(kept.size());
  stat.median = quantileSorted(kept, 0.5);
  stat.iqr = quantileSorted(kept, 0.75) - quantileSorted(kept, 0.25);
  return stat;
}

}  // namespace tracetwin::core::kineto
