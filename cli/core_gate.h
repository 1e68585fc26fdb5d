// `compare --core-tolerance F` on a CPU: the replay runs while every core of
// this host reads within F of its fast phase, and again (at most twice)
// when a core slowed during it, as `sweep --measure --core-tolerance` runs
// its rounds (calibration/steady_cores_run.h; docs/sweeps.md, "Cores that
// slow down one at a time"). On the 2-vCPU VM of 2026-11-30 the host-speed
// probe read 0.54-0.96x of the calibration's speed over five rounds of the
// 2-rank check (scripts/multirank-check.py), and each round's error moved
// with it: a gate measures the host the models were calibrated on.
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

// Runs `measure` (which returns the step it measured, ms) on steady cores
// and returns which attempt was kept: `kept.value` is that attempt's step,
// and `kept_attempt` (0-based) tells the caller which of its results to use.
CoreGateRun runOnSteadyCoresHere(double tolerance, const std::function<double()>& measure,
                                 int* kept_attempt);

// "core gate: every core within 1.25x of the fast phase; 3 runs, kept one steady at 1.08x ..."
std::string coreGateLine(const CoreGateRun& gate);
nlohmann::json coreGateJson(const CoreGateRun& gate);

}  // namespace tracetwin::cli
