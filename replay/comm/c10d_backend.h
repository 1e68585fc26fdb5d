// The c10d process group a CommReplayer drives. Private to replay/comm
// sources: c10d headers stay out of everything else.
#pragma once

#include <torch/version.h>

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include "replay/comm/collective_names.h"

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

// The handle of an issued collective (c10d::ProcessGroup::Work in 1.13,
// c10d::Work since 2.0).
using WorkHandle = decltype(std::declval<C10dBackend&>().barrier());

struct BackendHandle {
  c10::intrusive_ptr<C10dBackend> group;
  std::string name;  // "gloo", "nccl"
  at::Device device = at::Device(at::kCPU);
};

// Where a group's ranks meet and how long they wait for each other.
struct GroupRendezvous {
  c10::intrusive_ptr<c10d::Store> store;
  int rank = 0;
  int size = 1;
  std::chrono::milliseconds timeout{300000};
  // The address Gloo binds to: loopback when every rank runs on this host,
  // else the host's own name (GLOO_SOCKET_IFNAME, when set, names the NIC).
  bool loopback = true;
};

// The groups a distributed replay issues collectives on: the world and the
// recorded groups this rank belongs to (group_plan.h).
struct CommGroups {
  BackendHandle world;
  std::map<std::string, BackendHandle> named;
  GroupLayout layout;
};

// A one-rank group for `device` ("cpu", "cuda", "cuda:N"): Gloo on CPU, NCCL
// on CUDA, rendezvous through an in-process HashStore. Throws UsageError for
// an unknown device and UnavailableError when the backend is not built in or
// the GPU is absent.
BackendHandle makeOneRankBackend(const std::string& device);

// A group of `rendezvous.size` ranks: Gloo on "cpu", NCCL on "cuda:N". Blocks
// until every rank of the group has joined (or the timeout). Throws like
// makeOneRankBackend, and RuntimeFailure when the peers do not join.
BackendHandle makeBackend(const std::string& device, const GroupRendezvous& rendezvous);

}  // namespace tracetwin::replay::comm
