#include "calibration/steady_cores_run.h"

#include <algorithm>

namespace tracetwin::calibration {

SteadyCoresRun runOnSteadyCores(CoreSpeedGauge& gauge, const SteadyCoresOptions& options,
                                const std::function<double()>& run) {
  SteadyCoresRun kept;
  const double waited_before = gauge.waitedSeconds();
  for (int attempt = 0; attempt <= std::max(0, options.max_reruns); ++attempt) {
    const double before = slowestCore(gauge.waitForSteady(options.tolerance, options.max_wait_s));
    const double value = run();
    const double after = slowestCore(gauge.readAll());
    const double slowdown = std::max(before, after);
    ++kept.runs;
    if (kept.runs == 1 || slowdown < kept.slowdown) {
      kept.value = value;
      kept.slowdown = slowdown;
      kept.kept_run = attempt;
    }
    if (slowdown <= options.tolerance) break;
  }
  kept.steady = kept.slowdown <= options.tolerance;
  kept.waited_s = gauge.waitedSeconds() - waited_before;
  return kept;
}

}  // namespace tracetwin::calibration
