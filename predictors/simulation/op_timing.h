// Per-op facts the simulation needs beyond device time: how many kernels an
// op launches, whether it synchronises the CPU with the device, and which
// stream it must wait for.
#pragma once

#include <string>
#include <unordered_set>

#include "core/graph.h"
#include "predictors/simulation/critical_path.h"

namespace tracetwin::predictors {

// The simulated streams of a GPU rank: compute, and the collectives' own
// (NCCL runs on a stream of its own in PyTorch DDP).
inline constexpr int64_t kComputeStream = 0;
inline constexpr int64_t kCommStream = 1;

// Kernels launched by an op of `family`: views and metadata ops launch none.
int launchesOf(const std::string& family);

// True for ops that block the CPU until the device is done: aten::item,
// _local_scalar_dense, nonzero, and copies from a CUDA tensor to the CPU.
bool isSynchronising(const core::Node& node);

// Sets sync / is_comm / wait_stream on `s`: a collective records the storages
// it touches; a later op reading one of them (on a CPU, reading or writing)
// waits for the collective.
void applyDependencies(const core::Node& node, const std::string& family,
                       std::unordered_set<int64_t>* comm_storages, SimOp* s);

}  // namespace tracetwin::predictors
