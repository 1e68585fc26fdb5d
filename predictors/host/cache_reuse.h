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
#include "predictors/host/step_touches.h"

namespace tracetwin::predictors {

struct ColdBytes {
  double inputs = 0.0;
  // Input tensors that went cold, each counted by the share of its bytes
  // that did (cold_tensors.h charges a small op per cold tensor).
  double input_tensors = 0.0;
  // Output bytes on a storage last touched long ago: execution traces name a
  // storage by its data pointer, so this is memory the allocator handed back
  // after it went cold. A write-allocate CPU reads each such line from DRAM
  // before writing it; a microbenchmark, re-running one op, gets the same
  // cache-hot block back every time and never pays it.
  double outputs = 0.0;
};

// For ops[i] (one iteration, in issue order), the bytes of its input and of
// its output tensors that the traffic since their storage's last touch has
// evicted from an LRU cache of `cache_bytes`: the tensor's own bytes were the
// most recent then, so after `since` bytes of other traffic the last
// cache_bytes - since of them are still cached, the rest is cold. Traffic is
// the sum of every op's input and output tensor bytes from the op that last
// touched the storage on, less the tensor itself; a storage counts once per
// op (an in-place output adds nothing), but again in every op that touches
// it, so the distance is an upper bound of the reuse distance. The
// iteration repeats: a tensor first used late in it was last touched in the
// previous iteration. An output the op allocates lands on the block of its
// size freed last (the allocator's reuse, cache_reuse.cpp) and is as cold as
// that block. cache_bytes <= 0: all zeros.
//
// Graded, not all-or-nothing: embbag_wide's gradient accumulation reads a
// 12.8 MB gradient the op before it wrote, 12.8 MB of traffic ago against an
// 8.4 MB cache; counted wholly cold, the add_ was predicted at 659 us against
// 497-553 replayed (637-651 for the SGD add_ with both inputs cold); graded,
// at 445.
std::vector<ColdBytes> coldBytes(const std::vector<const core::Node*>& ops, double cache_bytes);
// The same over touches collected once (stepTouches(ops)).
std::vector<ColdBytes> coldBytes(const StepTouches& step, double cache_bytes);

}  // namespace tracetwin::predictors
