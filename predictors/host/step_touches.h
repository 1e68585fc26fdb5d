// The tensors every op of an iteration touches, collected once for the
// walks over it (cache_reuse.h, reuse_distance.h): on a 100k-op graph the
// collection costs as much as a walk, and the storages come as dense slots
// so the walks index arrays instead of hashing each touch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/graph.h"

namespace tracetwin::predictors {

struct StepTouch {
  int64_t storage;
  uint32_t slot;  // the storage's dense index, 0 .. StepTouches::storages - 1
  double bytes;
  bool input;
  // An output on a storage none of the op's inputs hold: memory the op
  // allocated (not a view, not in place), which the replay's allocator takes
  // from the blocks freed before it.
  bool produced = false;
};

struct StepTouches {
  std::vector<StepTouch> touches;  // op i's: [first[i], first[i + 1])
  std::vector<size_t> first;
  size_t storages = 0;
  size_t ops() const { return first.empty() ? 0 : first.size() - 1; }
};

// Per op, its defined tensors with a storage, inputs then outputs, in
// argument order (a tensor passed twice, or an in-place output, comes again).
StepTouches stepTouches(const std::vector<const core::Node*>& ops);

// The same, one op at a time: a caller that walks the ops anyway collects
// their touches while each node's arguments are still in the CPU's caches
// (a separate walk over 100k ops' arguments was 9% of a prediction).
class StepTouchesBuilder {
 public:
  explicit StepTouchesBuilder(size_t expected_ops);
  void add(const core::Node& op);
  StepTouches finish() &&;  // assigns the dense slots

 private:
  StepTouches s_;
};

}  // namespace tracetwin::predictors
