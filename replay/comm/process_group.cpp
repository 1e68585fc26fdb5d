// c10d process groups: Gloo needs its headers (Debian: libgloo-dev) and NCCL
// a LibTorch built with CUDA; each part is compiled only when present
// (TRACETWIN_HAVE_GLOO, TRACETWIN_TORCH_HAS_NCCL from
// replay/comm/sources.cmake) and otherwise says what is missing.
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <cstdlib>

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

BackendHandle makeGloo(const GroupRendezvous& rv) {
#ifdef TRACETWIN_HAVE_GLOO
  auto options = c10d::ProcessGroupGloo::Options::create(rv.timeout);
  // Loopback when the ranks share this host: resolving the host name fails in
  // containers without DNS. Across hosts, the NIC the user names wins.
  if (rv.loopback) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  } else if (const char* nic = std::getenv("GLOO_SOCKET_IFNAME"); nic != nullptr && *nic) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(nic));
  } else {
    options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  }
  BackendHandle handle;
  handle.group = c10::make_intrusive<c10d::ProcessGroupGloo>(rv.store, rv.rank, rv.size, options);
  handle.name = "gloo";
  return handle;
#else
  (void)rv;
  throw UnavailableError(
      "communication replay on CPU needs LibTorch's Gloo backend, and this build found no Gloo "
      "headers (gloo/algorithm.h; Debian: libgloo-dev); reconfigure after installing them");
#endif
}

BackendHandle makeNccl(int index, const GroupRendezvous& rv) {
  device::requireCudaDevice(index);
#ifdef TRACETWIN_TORCH_HAS_NCCL
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = rv.timeout;
  BackendHandle handle;
  handle.group = c10::make_intrusive<c10d::ProcessGroupNCCL>(rv.store, rv.rank, rv.size, options);
  handle.name = "nccl";
  handle.device = at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(index));
  return handle;
#else
  (void)rv;
  throw UnavailableError(
      "communication replay on CUDA needs a LibTorch built with CUDA and NCCL; this one has no "
      "ProcessGroupNCCL (Debian's libtorch is CPU-only; build against a CUDA PyTorch, "
      "docs/gpu.md)");
#endif
}

}  // namespace

BackendHandle makeBackend(const std::string& device, const GroupRendezvous& rendezvous) {
  try {
    if (device == "cpu") return makeGloo(rendezvous);
    const int index = device::cudaIndexFromDevice(device);
    if (index >= 0) return makeNccl(index, rendezvous);
  } catch (const c10::Error& e) {
    const std::string what = e.what_without_backtrace();
    throw RuntimeFailure("cannot create the " + std::to_string(rendezvous.size) +
                         "-rank process group on " + device + " as rank " +
                         std::to_string(rendezvous.rank) + ": " + what.substr(0, what.find('\n')));
  }
  throw UsageError("unknown device '" + device +
                   "' for communication replay: expected cpu, cuda or cuda:N");
}

BackendHandle makeOneRankBackend(const std::string& device) {
  GroupRendezvous one;
  one.store = c10::make_intrusive<c10d::HashStore>();
  return makeBackend(device, one);
}

}  // namespace tracetwin::replay::comm
