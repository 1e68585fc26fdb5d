// Runs each calibration replay while the host runs in its fast phase (see
// host_speed_gauge.h): waits for a steady reading before the replay, reads
// again after it, and runs the replay again when the host slowed down in
// between. Keeps the run with the lowest slowdown when none was steady.
// With an infinite tolerance it only reads the gauge around each replay.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "calibration/host_speed_gauge.h"
#include "calibration/replay_unit.h"

namespace tracetwin::calibration {

struct SteadyHostOptions {
  double tolerance = 1.25;  // steady: a gauge reading within 1.25x of the fast phase
  double max_wait_s = 1.0;  // before one replay; then it runs anyway
  int max_reruns = 3;       // replays again after a slow one
};

struct SteadyHostStats {
  int64_t units = 0;              // replays kept
  int64_t steady = 0;             // of them, measured on a steady host
  int64_t reruns = 0;             // replays thrown away because the host slowed
  double waited_s = 0;            // spent polling the gauge
  std::vector<double> slowdowns;  // of each replay kept
};

class SteadyHostGate {
 public:
  SteadyHostGate(HostSpeedGauge& gauge, SteadyHostOptions options)
      : gauge_(gauge), options_(options) {}

  // Runs `replay` once or more; every row of the outcome kept gets its
  // slowdown (the larger of the readings before and after it).
  CaseOutcome run(const std::function<CaseOutcome()>& replay);

  const SteadyHostStats& stats() const { return stats_; }

 private:
  HostSpeedGauge& gauge_;
  SteadyHostOptions options_;
  SteadyHostStats stats_;
};

}  // namespace tracetwin::calibration
