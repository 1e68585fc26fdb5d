#include "core/kineto/profiler_stalls.h"

#include <algorithm>

namespace tracetwin::core::kineto {

ProfilerStalls::ProfilerStalls(const KinetoTrace& trace) {
  std::vector<std::pair<double, double>> raw;
  for (const KinetoEvent& e : trace.events)
    if (e.category == EventCategory::kProfilerOverhead && e.dur > 0)
      raw.emplace_back(e.ts, e.end());
  std::sort(raw.begin(), raw.end());
  for (const auto& [start, end] : raw) {
    if (!spans_.empty() && start <= spans_.back().second) {
      spans_.back().second = std::max(spans_.back().second, end);
    } else {
      spans_.emplace_back(start, end);
    }
  }
  double sum = 0;
  for (const auto& [start, end] : spans_) done_.push_back(sum += end - start);
}

double ProfilerStalls::within(double from, double to) const {
  if (spans_.empty() || to <= from) return 0;
  // Stall time before `t`: whole spans ending by t, plus the part of the
  // span t falls in.
  auto before = [&](double t) {
    auto it =
        std::upper_bound(spans_.begin(), spans_.end(), t,
                         [](double x, const std::pair<double, double>& s) { return x < s.first; });
    if (it == spans_.begin()) return 0.0;
    const size_t k = size_t(it - spans_.begin()) - 1;
    const double whole = k ? done_[k - 1] : 0.0;
    return whole + std::min(t, spans_[k].second) - spans_[k].first;
  };
  return before(to) - before(from);
}

}  // namespace tracetwin::core::kineto
