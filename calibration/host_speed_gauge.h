// How fast the host runs right now, relative to the fastest it has run.
//
// The CPU hosts this tool calibrates on are often shared: on the 2-core VM of
// its development, another tenant on the sibling hyperthreads made everything
// 1.6-1.9x slower in phases that last from a tenth of a second to several
// seconds. A microbenchmark timed in a slow phase teaches the models a time
// the workload does not take on the host, and measurements taken minutes
// apart disagree by 15-45% (the calibration report's "repeat GMAE").
//
// The gauge times a fixed piece of work (a few tens of microseconds of
// streaming multiply-adds over a cache-resident buffer) and compares it with
// the host's fast phase: the 2nd percentile of its recent readings. (Not the
// minimum: one lucky reading, 20% below the fast phase's usual time, would
// make every later one look slow.) Calibration reads it before and after
// each replay and re-measures what ran while the host was slow.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace tracetwin::calibration {

// The fixed work: multiply-adds over two float buffers, resident in L1/L2.
// Every value converges to a normal float: one that decayed towards zero
// would go subnormal after ~87,000 passes, and subnormal arithmetic is
// slow (calibrations long enough read a steady 2.4x "slowdown" from then
// on, with the host at its usual speed).
class ReferenceWork {
 public:
  static constexpr size_t kFloats = 8192;  // 2 x 32 KiB
  ReferenceWork();
  void pass();
  // The smallest magnitude in the buffers.
  float smallest() const;

 private:
  std::vector<float> a_, b_;
};

// One timing of the fixed work, in microseconds.
double referenceWorkUs();

class HostSpeedGauge {
 public:
  using Reading = std::function<double()>;         // microseconds of the fixed work
  using Sleep = std::function<void(double secs)>;  // between polls

  // Takes `warmup_readings` readings at once so the first slowdown has a
  // baseline. Tests pass fakes; the defaults time referenceWorkUs() and sleep.
  explicit HostSpeedGauge(Reading reading = referenceWorkUs, Sleep sleep = nullptr,
                          int warmup_readings = 20);

  // One reading, as slowdown: its time over the baseline (which this
  // reading already counts in).
  double read();

  // Polls every `poll_s` until a reading is within `tolerance` (e.g. 1.2) of
  // the fastest, or `max_wait_s` has been spent sleeping. Returns the last
  // slowdown read (> tolerance when it gave up).
  double waitForSteady(double tolerance, double max_wait_s, double poll_s = 0.01);

  // The fast phase's time of the work: the 2nd percentile of the last
  // kWindow readings.
  double baselineUs() const { return baseline_us_; }

  static constexpr size_t kWindow = 4096;

 private:
  void updateBaseline();

  Reading reading_;
  Sleep sleep_;
  std::vector<double> window_;  // ring of the last kWindow readings
  size_t next_ = 0;
  size_t since_update_ = 0;
  double baseline_us_ = 0;
};

}  // namespace tracetwin::calibration
