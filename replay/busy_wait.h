// Calibrated busy waits on the replaying thread (`replay --host-time`).
// Torch-free; templated on the clock so tests drive it with a fake one.
//
// A busy wait, not a sleep: a sleeping thread gives its core away and wakes
// tens of microseconds late, longer than most of the waits asked for (adds5k:
// about 0.1 us before each of its 5,000 ops). Spinning on the clock still
// overshoots: the last read lands past the deadline, and the call costs a read
// or two of its own (steady_clock is ~20-25 ns through the vDSO here), which
// over 5,000 waits an iteration would be 0.1-0.25 ms of adds5k's 8.4.
// calibrate() measures that overshoot as the caller sees it and wait() takes
// it off each wait; a wait shorter than it is carried into the next one, so
// the sum of what was asked is what is spent. A negative wait is a debt the
// next waits pay first (replay/host_time.h: an op that ran over the
// original's time), until reset().
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

#include "core/statistics.h"

namespace tracetwin::replay {

template <class Clock>
class BasicBusyWaiter {
 public:
  // Times `probes` spins of `probe_us` each from outside (a clock read before
  // and after, as the caller's timer reads around the next call) and keeps
  // the median excess over the spin asked for and over an empty pair of
  // reads: the caller pays that read with or without a wait.
  void calibrate(int probes = 201, double probe_us = 1.0) {
    std::vector<double> excess, empty;
    excess.reserve(size_t(std::max(probes, 1)));
    empty.reserve(size_t(std::max(probes, 1)));
    for (int i = 0; i < probes; ++i) {
      auto start = Clock::now();
      auto end = Clock::now();
      empty.push_back(std::chrono::duration<double, std::micro>(end - start).count());
      start = Clock::now();
      spin(probe_us);
      end = Clock::now();
      excess.push_back(std::chrono::duration<double, std::micro>(end - start).count() - probe_us);
    }
    overshoot_us_ =
        std::max(0.0, core::median(std::move(excess)) - core::median(std::move(empty)));
  }

  // Adds `us` (either sign) to the balance carried from earlier calls and
  // spins for it less the overshoot when that is positive; a balance at or
  // under the overshoot is carried to the next call.
  void wait(double us) {
    carry_us_ += us;
    if (carry_us_ <= overshoot_us_) return;
    spin(carry_us_ - overshoot_us_);
    carry_us_ = 0;
  }

  // Spins until `deadline` less the overshoot; nothing when it has passed.
  void until(typename Clock::time_point deadline) {
    const auto end = deadline - std::chrono::duration_cast<typename Clock::duration>(
                                    std::chrono::duration<double, std::micro>(overshoot_us_));
    while (Clock::now() < end) {
    }
  }

  // Drops the carried balance, debt or credit.
  void reset() { carry_us_ = 0; }

  double overshootUs() const { return overshoot_us_; }
  // The balance carried: asked and not yet spent (> 0), or owed (< 0).
  double carriedUs() const { return carry_us_; }

 private:
  static void spin(double us) {
    if (us <= 0) return;
    const auto until = Clock::now() + std::chrono::duration_cast<typename Clock::duration>(
                                          std::chrono::duration<double, std::micro>(us));
    while (Clock::now() < until) {
    }
  }

  double overshoot_us_ = 0;
  double carry_us_ = 0;
};

using BusyWaiter = BasicBusyWaiter<std::chrono::steady_clock>;

}  // namespace tracetwin::replay
