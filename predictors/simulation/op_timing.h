// Per-op facts the simulation needs beyond device time: how many kernels an
// op launches, whether it synchronises the CPU with the device, and which
// stream it must wait for.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/graph.h"
#include "predictors/simulation/critical_path.h"

namespace tracetwin::predictors {

// The simulated streams of a GPU rank: compute, and the collectives' own
// (NCCL runs on a stream of its own in PyTorch DDP).
inline constexpr int64_t kComputeStream = 0;
inline constexpr int64_t kCommStream = 1;

// Kernels launched by an op of `family`: views and metadata ops launch none.
int launchesOf(std::string_view family);

// True for ops that block the CPU until the device is done: aten::item,
// _local_scalar_dense, nonzero, and copies from a CUDA tensor to the CPU.
bool isSynchronising(const core::Node& node);

// What applyDependencies needs of an op's tensors, read by
// CommDependencies::observe while the op's node is still in cache (the pass
// that computes its features). Walking every node's tensors again in a
// later pass, against a set of storages, was 9-10% of predicting a 100k-op
// graph with a collective every 500 ops (cache misses on the nodes).
struct OpDependencies {
  bool synchronising = false;  // isSynchronising(node)
  bool comm = false;           // a collective
  bool inputs_wait = false;    // an input's storage was touched by an earlier collective
  bool outputs_wait = false;   // an output's storage was
};

// The storages the collectives so far touched. observe() the ops in the
// order they are simulated.
class CommDependencies {
 public:
  OpDependencies observe(const core::Node& node, std::string_view family);

 private:
  void record(int64_t storage);
  bool touched(int64_t storage) const;

  std::unordered_set<int64_t> storages_;
  // A bit per storage id modulo kFilterBits, set for the recorded ones: most
  // tensors of a step never met a collective, and a bit test spares them a
  // hash lookup (a division; 3-4% of predicting a 100k-op graph).
  static constexpr int64_t kFilterBits = int64_t{1} << 16;
  std::vector<uint64_t> filter_ = std::vector<uint64_t>(kFilterBits / 64, 0);
  // Per recorded schema: 0 never synchronises, 1 always, 2 a copy that
  // does when it goes from a CUDA tensor to the CPU (isSynchronising).
  std::unordered_map<const core::OpSchema*, int> sync_kind_;
};

// Sets sync / is_comm / wait_stream on `s` from `d`: a collective's storages
// were recorded; a later op reading one of them (on a CPU, reading or
// writing) waits for the collective.
void applyDependencies(const OpDependencies& d, SimOp* s);

}  // namespace tracetwin::predictors
