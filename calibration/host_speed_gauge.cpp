#include "calibration/host_speed_gauge.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

namespace tracetwin::calibration {
namespace {

constexpr int kPasses = 24;  // 10-26 us per timing on the development VM, phase-dependent

}  // namespace

ReferenceWork::ReferenceWork() : a_(kFloats, 1.0f), b_(kFloats) {
  // Each value tends to 1000 * b: 1 to 97, never 0.
  for (size_t i = 0; i < kFloats; ++i) b_[i] = 1e-3f * static_cast<float>(i % 97 + 1);
}

void ReferenceWork::pass() {
  for (size_t i = 0; i < kFloats; ++i) a_[i] = a_[i] * 0.999f + b_[i];
}

float ReferenceWork::smallest() const {
  float m = std::numeric_limits<float>::infinity();
  for (float v : a_) m = std::min(m, std::fabs(v));
  return m;
}

double referenceWorkUs() {
  static ReferenceWork work;
  // The minimum of three timings: a single interrupt should not read as a
  // slow host.
  double best = std::numeric_limits<double>::infinity();
  for (int k = 0; k < 3; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int p = 0; p < kPasses; ++p) work.pass();
    // Keep the result observable so the loop is not optimised away.
    volatile float sink = work.smallest();
    (void)sink;
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  return best;
}

HostSpeedGauge::HostSpeedGauge(Reading reading, Sleep sleep, int warmup_readings)
    : reading_(std::move(reading)), sleep_(std::move(sleep)) {
  if (!sleep_) {
    sleep_ = [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); };
  }
  for (int i = 0; i < warmup_readings; ++i) read();
}

double HostSpeedGauge::read() {
  const double us = reading_();
  if (!(us > 0) || !std::isfinite(us)) return 1.0;  // a clock that did not move says nothing
  if (window_.size() < kWindow) {
    window_.push_back(us);
  } else {
    window_[next_] = us;
    next_ = (next_ + 1) % kWindow;
  }
  // A sort of 4096 values per reading would cost more than the work it
  // times; every 32 readings is enough to follow a drifting host. Early on,
  // and whenever a reading beats the baseline, update at once.
  if (++since_update_ >= 32 || window_.size() < 64 || us < baseline_us_) updateBaseline();
  return us / baseline_us_;
}

void HostSpeedGauge::updateBaseline() {
  since_update_ = 0;
  std::vector<double> sorted = window_;
  const size_t k = sorted.size() * 2 / 100;  // the 2nd percentile; the minimum below 50
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(k), sorted.end());
  baseline_us_ = sorted[k];
}

double HostSpeedGauge::waitForSteady(double tolerance, double max_wait_s, double poll_s) {
  const int max_polls = poll_s > 0 ? static_cast<int>(std::ceil(max_wait_s / poll_s - 1e-9)) : 0;
  double slowdown = read();
  for (int poll = 0; slowdown > tolerance && poll < max_polls; ++poll) {
    sleep_(poll_s);
    slowdown = read();
  }
  return slowdown;
}

}  // namespace tracetwin::calibration
