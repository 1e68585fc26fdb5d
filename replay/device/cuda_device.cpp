// CUDA device discovery and the CUDA-events timer (compiled only with the
// CUDA toolkit; cuda_device_unavailable.cpp stands in without it).
#include <cuda_runtime_api.h>

#include "core/errors.h"
#include "replay/device/cuda_check.h"
#include "replay/device/device_timer.h"
#include "replay/device/mark_clock.h"

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

// Events come from a pool that grows to the most marks an iteration made, so
// measured iterations create none.
class CudaEventMarkClock : public MarkClock {
 public:
  CudaEventMarkClock(int device, cudaStream_t stream) : device_(device), stream_(stream) {}
  void origin() override {
    CudaDeviceGuard guard(device_);
    used_ = 0;
    TRACETWIN_CUDA_CALL(cudaEventRecord(next()->get(), stream_));
  }
  size_t mark() override {
    CudaDeviceGuard guard(device_);
    TRACETWIN_CUDA_CALL(cudaEventRecord(next()->get(), stream_));
    return used_ - 2;
  }
  std::vector<double> resolveUs() override {
    CudaDeviceGuard guard(device_);
    std::vector<double> out;
    if (used_ == 0) return out;
    TRACETWIN_CUDA_CALL(cudaEventSynchronize(pool_[used_ - 1]->get()));
    for (size_t i = 1; i < used_; ++i) {
      float ms = 0;
      TRACETWIN_CUDA_CALL(cudaEventElapsedTime(&ms, pool_[0]->get(), pool_[i]->get()));
      out.push_back(double(ms) * 1000.0);
    }
    return out;
  }

 private:
  CudaEvent* next() {
    if (used_ == pool_.size()) pool_.push_back(std::make_unique<CudaEvent>());
    return pool_[used_++].get();
  }
  int device_;
  cudaStream_t stream_;
  std::vector<std::unique_ptr<CudaEvent>> pool_;  // [0]: the origin
  size_t used_ = 0;
};

}  // namespace

std::unique_ptr<MarkClock> makeCudaEventMarkClock(int device, void* stream) {
  requireCudaDevice(device);
  return std::make_unique<CudaEventMarkClock>(device, static_cast<cudaStream_t>(stream));
}

std::unique_ptr<DeviceTimer> makeCudaEventTimer(int device, void* stream) {
  requireCudaDevice(device);
  return std::make_unique<CudaEventTimer>(device, static_cast<cudaStream_t>(stream));
}

}  // namespace tracetwin::replay::device
