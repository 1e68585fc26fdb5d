// A DeviceTimer that returns scripted durations, for tests of code that times
// iterations (the replay loop, calibration sweeps) on hosts without a GPU.
#pragma once

#include <utility>
#include <vector>

#include "core/errors.h"
#include "replay/device/device_timer.h"

namespace tracetwin::replay::device {

class FakeDeviceTimer : public DeviceTimer {
 public:
  // stopMs() returns these in turn, then repeats the last one.
  explicit FakeDeviceTimer(std::vector<double> durations_ms)
      : durations_ms_(std::move(durations_ms)) {}

  void start() override {
    running_ = true;
    ++starts_;
  }
  double stopMs() override {
    if (!running_) throw UsageError("FakeDeviceTimer::stopMs() called without start()");
    running_ = false;
    if (durations_ms_.empty()) return 0.0;
    size_t i = stops_ < durations_ms_.size() ? stops_ : durations_ms_.size() - 1;
    ++stops_;
    return durations_ms_[i];
  }
  const char* clockName() const override { return "fake"; }

  int starts() const { return starts_; }
  size_t stops() const { return stops_; }

 private:
  std::vector<double> durations_ms_;
  bool running_ = false;
  int starts_ = 0;
  size_t stops_ = 0;
};

}  // namespace tracetwin::replay::device
