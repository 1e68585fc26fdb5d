// The device side of compiled-kernel replay, behind an interface so the
// replay's use of it is tested with fakes on a host without a GPU:
//   mode 1: load a compiled kernel from Inductor's cache and launch it;
//   modes 2 and 3: a device-side wait of a given length on the current
//   stream, standing in for a kernel that cannot be launched, so the stream
//   stays busy as long as the original kernel kept it and the host runs
//   ahead of the device as it did.
// The CUDA implementation (cuda_kernel_device.cpp) uses the driver API
// (cuModuleLoadData, cuModuleGetFunction, cuLaunchKernel) through the
// runtime's driver entry points, so tracetwin does not link libcuda, and
// launches on the stream LibTorch has current (torch_cuda_stream.h).
// Torch-free.
#pragma once

#include <memory>
#include <string>

#include "replay/compiled/inductor_cache.h"
#include "replay/compiled/launch_layout.h"

namespace tracetwin::replay::compiled {

using KernelHandle = const void*;  // owned by the device; valid while it lives

class KernelDevice {
 public:
  virtual ~KernelDevice() = default;
  virtual std::string describe() const = 0;  // "cuda:0, CUDA driver API"
  // Loads `binary` (once; later calls return the same handle). Throws
  // InputError for an unreadable file, RuntimeFailure when the driver
  // refuses it (wrong architecture, too much shared memory).
  virtual KernelHandle load(const TritonBinary& binary) = 0;
  // Launches on the current stream; params[i] points at the value of the
  // kernel's parameter i. Throws RuntimeFailure with the driver's error.
  virtual void launch(KernelHandle kernel, const LaunchPlan& plan, void** params) = 0;
  // Keeps the current stream busy for `us` microseconds.
  virtual void waitUs(double us) = 0;
};

// The CUDA driver on device `index`. Throws UnavailableError when this build
// has no CUDA toolkit, LibTorch has no CUDA, or there is no such device.
std::unique_ptr<KernelDevice> makeCudaKernelDevice(int index);

}  // namespace tracetwin::replay::compiled
