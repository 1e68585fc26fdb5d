// Timing one replayed iteration on the device it runs on, and finding out
// whether that device exists. Torch-free and CUDA-free: the CUDA-events
// implementation lives in cuda_device.cpp, compiled only with the toolkit.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace tracetwin::replay::device {

class DeviceTimer {
 public:
  virtual ~DeviceTimer() = default;
  // Marks the start of the timed region (on the device's stream for CUDA).
  virtual void start() = 0;
  // Marks its end, waits for the device to reach it, returns the elapsed ms.
  // Throws UsageError when start() was not called first.
  virtual double stopMs() = 0;
  virtual const char* clockName() const = 0;  // "steady_clock", "cuda_event"
};

// Host clock: right for CPU replay, where ops finish before they return.
std::unique_ptr<DeviceTimer> makeSteadyClockTimer();

// CUDA events recorded on `stream` (a cudaStream_t; nullptr = the legacy
// default stream) of device `device`. cudaEventElapsedTime resolves about
// 0.5 us. Throws UnavailableError like requireCudaDevice().
std::unique_ptr<DeviceTimer> makeCudaEventTimer(int device, void* stream = nullptr);

// True when this build has the CUDA toolkit (TRACETWIN_HAVE_CUDA).
bool cudaCompiledIn();

struct CudaProbe {
  int count = 0;       // usable CUDA devices; 0 when none
  std::string reason;  // why count is 0, e.g. "cudaGetDeviceCount returned ..."
};
CudaProbe probeCudaDevices();
int cudaDeviceCount();  // never throws; 0 when no device or built without CUDA

// Throws UnavailableError with the reason when device `index` is not usable:
// "no CUDA device: cudaGetDeviceCount returned <error>", "... built without
// CUDA ...", or "no CUDA device cuda:<index>: this host has <n>".
void requireCudaDevice(int index);

// What a CUDA device is, for the spec a calibration writes: cross-device
// scaling reads its SM count and clock (predictors/kernels/cross_device.h), which
// the host's CPU must not stand in for.
struct CudaDeviceFacts {
  std::string name;  // "NVIDIA H200"
  int multiprocessors = 0;
  double clock_hz = 0;  // peak SM clock
  int64_t memory_bytes = 0;
  int64_t l2_bytes = 0;
};
// Throws UnavailableError like requireCudaDevice(index).
CudaDeviceFacts cudaDeviceFacts(int index);

// "cuda" -> 0, "cuda:3" -> 3, anything else -> -1.
int cudaIndexFromDevice(const std::string& device);

}  // namespace tracetwin::replay::device
