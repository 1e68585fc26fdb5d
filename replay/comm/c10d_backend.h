// The c10d process group a CommReplayer drives. Private to replay/comm
// sources: c10d headers stay out of everything else.
#pragma once

#include <torch/version.h>

#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>

#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#endif

namespace tracetwin::replay::comm {

// ProcessGroupGloo/NCCL derive from c10d::ProcessGroup in LibTorch 1.13 and
// from c10d::Backend since 2.0; both bases declare the same collectives.
#if TORCH_VERSION_MAJOR >= 2
using C10dBackend = c10d::Backend;
#else
using C10dBackend = c10d::ProcessGroup;
#endif

struct BackendHandle {
  c10::intrusive_ptr<C10dBackend> group;
  std::string name;  // "gloo", "nccl"
  at::Device device = at::Device(at::kCPU);
};

// A one-rank group for `device` ("cpu", "cuda", "cuda:N"): Gloo on CPU, NCCL
// on CUDA, rendezvous through an in-process HashStore. Throws UsageError for
// an unknown device and UnavailableError when the backend is not built in or
// the GPU is absent.
BackendHandle makeOneRankBackend(const std::string& device);

}  // namespace tracetwin::replay::comm
