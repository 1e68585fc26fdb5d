// The host-speed gauge (host_speed_gauge.h) on every core this process may
// use, one core after another.
//
// On the 2-vCPU development VM of 2026-11-29 (AMD EPYC, Zen 5) the slow
// phases are per core: for tens of seconds to minutes one vCPU ran the
// bundled CPU captures 1.6-1.9x slower than the other (mlp 9.8 against 5.8
// ms, transformer 14.0 against 7.5, a 512^3 float32 mm at 3.1-3.5 against
// 5.8 GFLOP/s; `taskset -c 0` against `-c 1`), then the two swapped, or both
// were slow, or neither. A latency-bound loop ran alike on both, so it is
// throughput another tenant takes (a sibling hardware thread on the
// physical core behind the vCPU, most likely). A process reads the gauge on
// the core it happens to be on; a job of two ranks, one per core, has one
// of them slowed whenever either core is, and a gauge read on one core
// cannot tell.
//
// Every core's reading is compared with one baseline, the fast phase of
// all of them: the cores are the same hardware, and a core that is slow
// through the first readings must still read as slow.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "calibration/host_speed_gauge.h"

namespace tracetwin::calibration {

class CoreSpeedGauge {
 public:
  // Moves the calling thread onto one CPU; a negative CPU puts it back on
  // the CPUs it had when the gauge was made.
  using PinTo = std::function<void(int cpu)>;

  // Reads every CPU of `cpus` `warmup_rounds` times at once so that the
  // first reading has a baseline. Tests pass fakes; onThisHost() the real
  // thing.
  CoreSpeedGauge(std::vector<int> cpus, HostSpeedGauge::Reading reading, PinTo pin,
                 HostSpeedGauge::Sleep sleep, int warmup_rounds = 10);

  // The CPUs of this process's affinity mask, timing referenceWorkUs() with
  // sched_setaffinity; throws when the mask cannot be read or changed.
  // `sleep` (default: sleep_for) may throw to end a wait early.
  static CoreSpeedGauge onThisHost(int warmup_rounds = 10, HostSpeedGauge::Sleep sleep = nullptr);

  // One reading per CPU, as slowdown over the shared baseline, in the order
  // of cpus(); the calling thread is back on its CPUs afterwards.
  std::vector<double> readAll();

  // Reads every CPU, every `poll_s` seconds, until all are within
  // `tolerance` (e.g. 1.25) of the fast phase or `max_wait_s` seconds have
  // been spent sleeping. Returns the last readings.
  std::vector<double> waitForSteady(double tolerance, double max_wait_s, double poll_s = 0.05);

  // Seconds spent sleeping in waitForSteady, over the gauge's life.
  double waitedSeconds() const { return waited_s_; }

  const std::vector<int>& cpus() const { return cpus_; }
  double baselineUs() const { return gauge_.baselineUs(); }

 private:
  std::vector<int> cpus_;
  PinTo pin_;
  HostSpeedGauge::Sleep sleep_;
  HostSpeedGauge gauge_;  // one window for all CPUs: the shared baseline
  double waited_s_ = 0;
};

// The largest of a reading's slowdowns (1 when it is empty).
double slowestCore(const std::vector<double>& slowdowns);

// "cpu0 1.02x, cpu1 2.31x".
std::string describeCoreSlowdowns(const std::vector<int>& cpus,
                                  const std::vector<double>& slowdowns);

}  // namespace tracetwin::calibration
