// Stand-ins for cuda_device.cpp when tracetwin is built without the CUDA
// toolkit: every entry point says so instead of pretending.
#include "core/errors.h"
#include "replay/device/device_timer.h"
#include "replay/device/mark_clock.h"

namespace tracetwin::replay::device {
namespace {
constexpr const char* kNotCompiled =
    "tracetwin was built without the CUDA toolkit (TRACETWIN_HAVE_CUDA=OFF); rebuild on a "
    "CUDA host with -DTRACETWIN_CUDA=ON (docs/gpu.md)";
}

bool cudaCompiledIn() { return false; }

CudaProbe probeCudaDevices() { return CudaProbe{0, kNotCompiled}; }

void requireCudaDevice(int index) {
  throw UnavailableError("no CUDA device cuda:" + std::to_string(index) + ": " + kNotCompiled);
}

CudaDeviceFacts cudaDeviceFacts(int index) {
  requireCudaDevice(index);
  return {};  // not reached
}

std::unique_ptr<MarkClock> makeCudaEventMarkClock(int device, void* /*stream*/) {
  requireCudaDevice(device);
  return nullptr;  // not reached
}

std::unique_ptr<DeviceTimer> makeCudaEventTimer(int device, void* /*stream*/) {
  requireCudaDevice(device);
  return nullptr;  // not reached
}

}  // namespace tracetwin::replay::device
