// Which input bytes of each op are likely cold (evicted from the last-level
// cache since they were last touched), from the op sequence of one
// iteration: memory-bound ops on a model's weights, gradients and optimizer
// state (ResNet-18's 47 MB of zero_/add_/mul_, DLRM's tables) stream from
// DRAM in a step, while a microbenchmark re-running one op finds its inputs
// cache-hot.
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph.h"

namespace tracetwin::predictors {

struct ColdBytes {
  double inputs = 0.0;
  // Output bytes on a storage last touched long ago: execution traces name a
  // storage by its data pointer, so this is memory the allocator handed back
  // after it went cold. A write-allocate CPU reads each such line from DRAM
  // before writing it; a microbenchmark, re-running one op, gets the same
  // cache-hot block back every time and never pays it.
  double outputs = 0.0;
};

// For ops[i] (one iteration, in issue order), the bytes of its input and of
// its output tensors whose storage was last touched more than `cache_bytes`
// of traffic ago. Traffic is the sum of every op's input and output tensor
// bytes (repeated touches count again, so the distance is an upper bound of
// the reuse distance). The iteration repeats: a tensor first used late in it
// was last touched in the previous iteration. cache_bytes <= 0: all zeros.
std::vector<ColdBytes> coldBytes(const std::vector<const core::Node*>& ops, double cache_bytes);

}  // namespace tracetwin::predictors
