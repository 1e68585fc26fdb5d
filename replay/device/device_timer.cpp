// The parts of device_timer.h that need no CUDA: the host clock timer and
// device-string parsing.
#include "replay/device/device_timer.h"

#include <chrono>
#include <cstdlib>

#include "core/errors.h"

namespace tracetwin::replay::device {
namespace {

class SteadyClockTimer : public DeviceTimer {
 public:
  void start() override {
    start_ = std::chrono::steady_clock::now();
    running_ = true;
  }
  double stopMs() override {
    const auto stop = std::chrono::steady_clock::now();
    if (!running_) throw UsageError("steady_clock timer: stopMs() called without start()");
    running_ = false;
    return std::chrono::duration<double, std::milli>(stop - start_).count();
  }
  const char* clockName() const override { return "steady_clock"; }

 private:
  std::chrono::steady_clock::time_point start_;
  bool running_ = false;
};

}  // namespace

std::unique_ptr<DeviceTimer> makeSteadyClockTimer() { return std::make_unique<SteadyClockTimer>(); }

int cudaIndexFromDevice(const std::string& device) {
  if (device == "cuda") return 0;
  const std::string prefix = "cuda:";
  if (device.compare(0, prefix.size(), prefix) != 0 || device.size() == prefix.size()) return -1;
  const std::string digits = device.substr(prefix.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 6) return -1;
  return std::atoi(digits.c_str());
}

int cudaDeviceCount() { return probeCudaDevices().count; }

}  // namespace tracetwin::replay::device
