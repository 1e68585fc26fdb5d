// Whether a recorded tensor describes memory that can exist: dimensions and
// strides not negative, an element count that fits in 64 bits and agrees with
// the recorded numel, and a byte extent an allocator could be asked for.
// The reader refuses a tensor that fails (a bad-input hunt found a shape of
// 2^32 x 2^32 predicted at 3.6e15 ms and aborting the replay inside LibTorch,
// and a short shapes list turning tensors into scalars, 12x the step).
#pragma once

#include <string>

#include "core/value.h"

namespace tracetwin::core {

// Empty when `t` is consistent, else what is wrong with it ("shape [2, -3]:
// a negative dimension"). `shape_recorded`: the trace gave this tensor a
// shape entry; without one the shape is unknown (not 0-d) and numel is not
// compared with it. Undefined tensors ([id,0,0,0,0,""]) are always consistent.
std::string tensorGeometryProblem(const TensorValue& t, bool shape_recorded);

}  // namespace tracetwin::core
