// CUDA device discovery and the CUDA-events timer (compiled only with the
// CUDA toolkit; cuda_device_unavailable.cpp stands in without it).
#include <cuda_runtime_api.h>

#include "core/errors.h"
#include "replay/device/cuda_check.h"
#include "replay/device/device_timer.h"

namespace tracetwin::replay::device {

bool cudaCompiledIn() { return true; }

CudaProbe probeCudaDevices() {
  CudaProbe probe;
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    probe.reason = std::string("cudaGetDeviceCount returned ") + cudaGetErrorName(status) + " (" +
                   cudaGetErrorString(status) + ")";
    return probe;
  }
  probe.count = count;
  if (count == 0) probe.reason = "cudaGetDeviceCount found 0 devices";
  return probe;
}

void requireCudaDevice(int index) {
  const CudaProbe probe = probeCudaDevices();
  if (probe.count == 0) throw UnavailableError("no CUDA device: " + probe.reason);
  if (index < 0 || index >= probe.count) {
    throw UnavailableError("no CUDA device cuda:" + std::to_string(index) + ": this host has " +
                           std::to_string(probe.count) +
                           " (cuda:0 .. cuda:" + std::to_string(probe.count - 1) + ")");
  }
}

CudaDeviceFacts cudaDeviceFacts(int index) {
  requireCudaDevice(index);
  cudaDeviceProp prop{};
  TRACETWIN_CUDA_CALL(cudaGetDeviceProperties(&prop, index));
  int clock_khz = 0;
  TRACETWIN_CUDA_CALL(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, index));
  CudaDeviceFacts f;
  f.name = prop.name;
  f.multiprocessors = prop.multiProcessorCount;
  f.clock_hz = clock_khz * 1e3;
  f.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  f.l2_bytes = prop.l2CacheSize;
  return f;
}

namespace {

class CudaEvent {
 public:
  CudaEvent() { TRACETWIN_CUDA_CALL(cudaEventCreate(&event_)); }
  ~CudaEvent() { cudaEventDestroy(event_); }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

class CudaEventTimer : public DeviceTimer {
 public:
  CudaEventTimer(int device, cudaStream_t stream) : device_(device), stream_(stream) {
    CudaDeviceGuard guard(device_);
    start_ = std::make_unique<CudaEvent>();
    stop_ = std::make_unique<CudaEvent>();
  }
  void start() override {
    CudaDeviceGuard guard(device_);
    TRACETWIN_CUDA_CALL(cudaEventRecord(start_->get(), stream_));
    running_ = true;
  }
  double stopMs() override {
    if (!running_) throw UsageError("cuda_event timer: stopMs() called without start()");
    running_ = false;
    CudaDeviceGuard guard(device_);
    TRACETWIN_CUDA_CALL(cudaEventRecord(stop_->get(), stream_));
    TRACETWIN_CUDA_CALL(cudaEventSynchronize(stop_->get()));
    float ms = 0;
    TRACETWIN_CUDA_CALL(cudaEventElapsedTime(&ms, start_->get(), stop_->get()));
    return ms;
  }
  const char* clockName() const override { return "cuda_event"; }

 private:
  int device_;
  cudaStream_t stream_;
  std::unique_ptr<CudaEvent> start_, stop_;
  bool running_ = false;
};

}  // namespace

std::unique_ptr<DeviceTimer> makeCudaEventTimer(int device, void* stream) {
  requireCudaDevice(device);
  return std::make_unique<CudaEventTimer>(device, static_cast<cudaStream_t>(stream));
}

}  // namespace tracetwin::replay::device
