#include "calibration/steady_host_gate.h"

#include <algorithm>
#include <chrono>
#include <optional>

namespace tracetwin::calibration {

CaseOutcome SteadyHostGate::run(const std::function<CaseOutcome()>& replay) {
  std::optional<CaseOutcome> best;
  double best_slowdown = 0;
  for (int attempt = 0; attempt <= options_.max_reruns; ++attempt) {
    const auto t0 = std::chrono::steady_clock::now();
    const double before = gauge_.waitForSteady(options_.tolerance, options_.max_wait_s);
    stats_.waited_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CaseOutcome outcome = replay();
    const double slowdown = std::max(before, gauge_.read());
    // A failure is not timing noise: running it again would fail again.
    const bool done = slowdown <= options_.tolerance || !outcome.failure.empty();
    if (!best || slowdown < best_slowdown) {
      best = std::move(outcome);
      best_slowdown = slowdown;
    }
    if (done) break;
    if (attempt < options_.max_reruns) ++stats_.reruns;
  }
  ++stats_.units;
  if (best_slowdown <= options_.tolerance) ++stats_.steady;
  stats_.slowdowns.push_back(best_slowdown);
  for (DatasetRow& row : best->rows) row.host_slowdown = best_slowdown;
  return std::move(*best);
}

}  // namespace tracetwin::calibration
