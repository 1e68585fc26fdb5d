#include "cli/core_gate.h"

#include <fmt/core.h>

#include <chrono>
#include <thread>

#include "calibration/core_speed_gauge.h"
#include "cli/stop_request.h"
#include "core/errors.h"

namespace tracetwin::cli {

CoreGateRun runOnSteadyCoresHere(double tolerance, const std::function<double()>& measure) {
  // A Ctrl-C while the gate waits ends the wait, not only the next replay.
  calibration::CoreSpeedGauge gauge = calibration::CoreSpeedGauge::onThisHost(10, [](double secs) {
    if (const int signal = StopOnSignal::requested(); signal != 0) {
      throw InterruptedError(fmt::format("compare stopped by {}", StopOnSignal::describe(signal)));
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(secs));
  });
  CoreGateRun out;
  out.tolerance = tolerance;
  out.kept =
      calibration::runOnSteadyCores(gauge, calibration::SteadyCoresOptions{tolerance}, measure);
  out.waited_s = gauge.waitedSeconds();
  out.cores_after = calibration::describeCoreSlowdowns(gauge.cpus(), gauge.readAll());
  return out;
}

std::string coreGateLine(const CoreGateRun& g) {
  return fmt::format(
      "core gate: every core within {:.2f}x of the fast phase; {} run(s), the kept one {} at "
      "{:.2f}x, {:.0f} s waited (cores now: {})",
      g.tolerance, g.kept.runs, g.kept.steady ? "steady" : "NOT steady (slow after the reruns too)",
      g.kept.slowdown, g.waited_s, g.cores_after);
}

nlohmann::json coreGateJson(const CoreGateRun& g) {
  return {{"tolerance", g.tolerance},
          {"runs", g.kept.runs},
          {"kept_slowdown", g.kept.slowdown},
          {"steady", g.kept.steady},
          {"waited_s", g.waited_s}};
}

}  // namespace tracetwin::cli
