// `compare --core-tolerance F` on a CPU: the replay runs while every core of
// this host reads within F of its fast phase, and again (at most twice)
// when a core slowed during it, as `sweep --measure --core-tolerance` runs
// its rounds (calibration/steady_cores_run.h; docs/sweeps.md, "Cores that
// slow down one at a time"). On the 2-vCPU VM of 2026-11-30 the host-speed
// probe read 0.54-0.96x of the calibration's speed over five rounds of the
// 2-rank check (scripts/multirank-check.py) and the rounds' errors spread
// 40-60 points; gated, 1.00-1.07x in 14 of 15 rounds and 10-20 points: a
// gate measures the host in the phase the models were calibrated in.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "calibration/steady_cores_run.h"

namespace tracetwin::cli {

struct CoreGateRun {
  calibration::SteadyCoresRun kept;
  double tolerance = 0;
  double waited_s = 0;      // sleeping for steady cores
  std::string cores_after;  // "cpu0 1.02x, cpu1 1.10x"
};

// Runs `measure` (which returns the step it measured, ms) on steady cores:
// `kept.value` is the kept attempt's step, `kept.kept_run` which of the
// caller's attempts (0-based) to use.
CoreGateRun runOnSteadyCoresHere(double tolerance, const std::function<double()>& measure);

// "core gate: every core within 1.25x of the fast phase; 3 runs, kept one steady at 1.08x ..."
std::string coreGateLine(const CoreGateRun& gate);
nlohmann::json coreGateJson(const CoreGateRun& gate);

}  // namespace tracetwin::cli
