// One-rank c10d process groups. Gloo needs its headers (Debian: libgloo-dev)
// and NCCL a LibTorch built with CUDA; each part is compiled only when
// present (TRACETWIN_HAVE_GLOO, TRACETWIN_TORCH_HAS_NCCL from
// replay/comm/sources.cmake) and otherwise says what is missing.
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#ifdef TRACETWIN_HAVE_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef TRACETWIN_TORCH_HAS_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "core/errors.h"
#include "replay/comm/c10d_backend.h"
#include "replay/device/device_timer.h"

namespace tracetwin::replay::comm {
namespace {

BackendHandle makeGloo() {
#ifdef TRACETWIN_HAVE_GLOO
  auto store = c10::make_intrusive<c10d::HashStore>();
  auto options = c10d::ProcessGroupGloo::Options::create();
  // Loopback, not the host name: one rank talks to nobody, and resolving the
  // host name fails in containers without DNS.
  options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  BackendHandle handle;
  handle.group =
      c10::make_intrusive<c10d::ProcessGroupGloo>(store, /*rank=*/0, /*size=*/1, options);
  handle.name = "gloo";
  return handle;
#else
  throw UnavailableError(
      "communication replay on CPU needs LibTorch's Gloo backend, and this build found no Gloo "
      "headers (gloo/algorithm.h; Debian: libgloo-dev); reconfigure after installing them");
#endif
}

BackendHandle makeNccl(int index) {
  device::requireCudaDevice(index);
#ifdef TRACETWIN_TORCH_HAS_NCCL
  auto store = c10::make_intrusive<c10d::HashStore>();
  auto options = c10d::ProcessGroupNCCL::Options::create();
  BackendHandle handle;
  handle.group =
      c10::make_intrusive<c10d::ProcessGroupNCCL>(store, /*rank=*/0, /*size=*/1, options);
  handle.name = "nccl";
  handle.device = at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(index));
  return handle;
#else
  throw UnavailableError(
      "communication replay on CUDA needs a LibTorch built with CUDA and NCCL; this one has no "
      "ProcessGroupNCCL (Debian's libtorch is CPU-only; build against a CUDA PyTorch, "
      "docs/gpu.md)");
#endif
}

}  // namespace

BackendHandle makeOneRankBackend(const std::string& device) {
  if (device == "cpu") return makeGloo();
  const int index = device::cudaIndexFromDevice(device);
  if (index >= 0) return makeNccl(index);
  throw UsageError("unknown device '" + device +
                   "' for communication replay: expected cpu, cuda "
                   "or cuda:N");
}

}  // namespace tracetwin::replay::comm
