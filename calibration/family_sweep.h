// A calibration's sweeps over the microbenchmark families within its budget:
// the budget's clock, the running cost estimate that decides which grid point
// still fits, the measurer (the steady-host gate on a CPU), and the passes
// that split the budget between families and repeat the measured points.
// Calibration-private; runCalibration (calibrator.cpp) drives them.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "calibration/calibrator.h"
#include "calibration/host_speed_gauge.h"
#include "calibration/microbench.h"
#include "calibration/replay_unit.h"
#include "calibration/steady_host_gate.h"

namespace tracetwin::calibration {

using Clock = std::chrono::steady_clock;

// Seconds of the steady clock since `t0`.
double secondsSince(Clock::time_point t0);

// The clock the budget is spent against: the steady clock, or a test's
// (CalibrationSeams::clock_s).
class BudgetClock {
 public:
  explicit BudgetClock(std::function<double()> now_s) : now_s_(std::move(now_s)) {
    if (!now_s_) {
      const Clock::time_point origin = Clock::now();
      now_s_ = [origin] { return secondsSince(origin); };
    }
  }
  double now() const { return now_s_(); }
  double since(double t0) const { return now_s_() - t0; }

 private:
  std::function<double()> now_s_;
};

// Running estimate of wall seconds per grid point from its cost estimate.
class CostModel {
 public:
  double predictS(const ReplayUnit& c, int iters) const {
    return kFixedS + ratio_ * c.est_us * 1e-6 * (iters + 1);
  }
  void observe(const ReplayUnit& c, int iters, double wall_s) {
    const double base = c.est_us * 1e-6 * (iters + 1);
    if (base <= 0) return;
    const double r = std::clamp((wall_s - kFixedS) / base, 0.05, 50.0);
    log_ratio_ = 0.7 * log_ratio_ + 0.3 * std::log(r);  // EMA in log space
    ratio_ = std::exp(log_ratio_);
  }

 private:
  static constexpr double kFixedS = 0.003;  // graph build + tensor materialisation
  double log_ratio_ = 0;
  double ratio_ = 1;
};

// Replays a unit, through the steady-host gate when there is one.
class UnitMeasurer {
 public:
  // On a CPU the gauge is always read around each replay (the dataset
  // records the slowdown); it gates only with a tolerance above 1.
  UnitMeasurer(const CalibrationOptions& o, std::string device_name)
      : device_name_(std::move(device_name)) {
    if (o.device != "cpu") return;
    if (o.seams.gauge_reading) {
      gauge_.emplace(o.seams.gauge_reading, o.seams.gauge_sleep);
    } else {
      gauge_.emplace();
    }
    SteadyHostOptions so;
    if (o.host_tolerance > 1) tolerance_ = o.host_tolerance;
    so.tolerance = tolerance_ > 0 ? tolerance_ : std::numeric_limits<double>::infinity();
    gate_.emplace(*gauge_, so);
  }
  // `o` may differ from the constructor's in budget only.
  CaseOutcome operator()(const ReplayUnit& u, const CalibrationOptions& o, int64_t* reruns) {
    if (!gate_) return runCase(u, o, device_name_);
    const int64_t before = gate_->stats().reruns;
    CaseOutcome out = gate_->run([&] { return runCase(u, o, device_name_); });
    *reruns += gate_->stats().reruns - before;
    return out;
  }
  HostGateSummary summary() const {
    HostGateSummary h;
    if (!gate_) return h;
    const SteadyHostStats& s = gate_->stats();
    h.gauged = true;
    h.gating = tolerance_ > 0;
    h.tolerance = tolerance_;
    h.baseline_us = gauge_->baselineUs();
    h.units = s.units;
    h.steady = s.steady;
    h.reruns = s.reruns;
    h.waited_s = s.waited_s;
    if (!s.slowdowns.empty()) {
      std::vector<double> v = s.slowdowns;
      std::sort(v.begin(), v.end());
      h.median_slowdown = v[v.size() / 2];
      h.p90_slowdown = v[v.size() * 9 / 10];
    }
    return h;
  }

 private:
  std::string device_name_;
  double tolerance_ = 0;  // gating; 0 when only gauging (or not on a CPU)
  std::optional<HostSpeedGauge> gauge_;
  std::optional<SteadyHostGate> gate_;
};

// One family's sweep: its grid in sampling order and how far it got, so a
// second pass can go on where the first stopped.
struct FamilySweep {
  const MicrobenchFamily* family = nullptr;
  std::vector<ReplayUnit> cases;
  size_t next = 0;
  int64_t case_runs = 0;             // grid points summed over units (small ones run twice)
  std::vector<ReplayUnit> measured;  // units that ran without failure, for the repeats
  FamilyRun run;
  bool exhausted() const { return next >= cases.size(); }
};

// `evict_bytes`: the stream of the family's evicted unit (CPU).
FamilySweep startSweep(const MicrobenchFamily& fam, const CalibrationOptions& o,
                       int64_t evict_bytes);

// Splits what is left of the budget between the sweeps not yet exhausted, by
// weight, in registry order; unused time flows to the later ones.
void sweepPass(std::vector<FamilySweep>& sweeps, const CalibrationOptions& o, UnitMeasurer& measure,
               const BudgetClock& clock, double t0, CostModel& cost, CalibrationResult& result);

// Measures the points of the first pass again, `o.repeats - 1` times, while
// the budget lasts. Each repeat walks every family once, so the measurements
// of one point lie a whole pass apart.
void repeatPasses(std::vector<FamilySweep>& sweeps, const CalibrationOptions& o,
                  UnitMeasurer& measure, const BudgetClock& clock, double t0,
                  CalibrationResult& result);

}  // namespace tracetwin::calibration
