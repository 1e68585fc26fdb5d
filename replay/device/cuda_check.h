// Checked CUDA runtime calls: TRACETWIN_CUDA_CALL(cudaFoo(...)) throws with
// the call as written and the runtime's own error text. Include only from
// sources compiled with the CUDA toolkit.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "core/errors.h"

namespace tracetwin::replay::device {

// "No device" and "driver too old" mean the host cannot run CUDA at all
// (UnavailableError, exit 3); anything else is a failure while running
// (RuntimeFailure, exit 4).
[[noreturn]] inline void throwCudaError(cudaError_t status, const char* call, const char* file,
                                        int line) {
  std::string msg = std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
                    cudaGetErrorString(status) + ") at " + file + ":" + std::to_string(line);
  if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver ||
      status == cudaErrorInvalidDevice) {
    throw UnavailableError(msg);
  }
  throw RuntimeFailure(msg);
}

}  // namespace tracetwin::replay::device

#define TRACETWIN_CUDA_CALL(call)                                                         \
  do {                                                                                    \
    const cudaError_t tt_status_ = (call);                                                \
    if (tt_status_ != cudaSuccess)                                                        \
      ::tracetwin::replay::device::throwCudaError(tt_status_, #call, __FILE__, __LINE__); \
  } while (0)

namespace tracetwin::replay::device {

// Makes `device` current for the guard's lifetime and restores the previous
// one, so timing and flushing never change the caller's device.
class CudaDeviceGuard {
 public:
  explicit CudaDeviceGuard(int device) {
    TRACETWIN_CUDA_CALL(cudaGetDevice(&previous_));
    TRACETWIN_CUDA_CALL(cudaSetDevice(device));
  }
  ~CudaDeviceGuard() { cudaSetDevice(previous_); }  // best effort: destructors must not throw
  CudaDeviceGuard(const CudaDeviceGuard&) = delete;
  CudaDeviceGuard& operator=(const CudaDeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace tracetwin::replay::device
