// Runs a measurement (a multi-rank replay, one rank per core) while every
// core of the host runs in its fast phase (core_speed_gauge.h): waits for
// all cores to read steady, runs, reads them again, and runs again when a
// core slowed in between. Keeps the run with the lowest slowdown when none
// was steady. calibration/steady_host_gate.h does the same for one core.
#pragma once

#include <functional>

#include "calibration/core_speed_gauge.h"

namespace tracetwin::calibration {

struct SteadyCoresOptions {
  double tolerance = 1.25;  // steady: every core within 1.25x of the fast phase
  double max_wait_s = 30;   // before one run; then it runs anyway
  int max_reruns = 2;       // runs again after a slow one
};

struct SteadyCoresRun {
  double value = 0;     // what the kept run returned
  double slowdown = 1;  // the kept run's: the slowest core before or after it
  bool steady = false;  // slowdown <= tolerance
  int runs = 0;         // runs made (1 + reruns)
  int kept_run = 0;     // which of them was kept (0: the first), for callers that keep its files
  double waited_s = 0;  // sleeping before the runs
};

// `run` returns the measurement (a step in ms, say) and may throw: the
// exception leaves this function, the cores as they were.
SteadyCoresRun runOnSteadyCores(CoreSpeedGauge& gauge, const SteadyCoresOptions& options,
                                const std::function<double()>& run);

}  // namespace tracetwin::calibration
