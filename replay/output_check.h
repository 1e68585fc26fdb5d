// Whether a replayed op produced what the original did: the recorded dtype,
// shape and, where the trace records them (schema >= 1.1.1), strides. An op
// can run without error and still be another op: outside torch.autocast an
// autocast op's recorded call computes in fp32 and returns fp32 where the
// original returned bf16, and every later op then sees the wrong dtype (or
// fails on it). Checked once, on the first iteration, outside the timed
// calls. Replay-private.
#pragma once

#include <ATen/ATen.h>

#include <string>

#include "core/value.h"
#include "replay/prepared_op.h"
#include "replay/slot_table.h"

namespace tracetwin::replay {

// "" when `t` matches `recorded`; else what differs ("dtype BFloat16
// recorded, Float replayed").
std::string describeMismatch(const at::Tensor& t, const core::TensorValue& recorded);

// The first result of `op` (its autocast casts' included) that differs from
// the record, as "output N: ..."; "" when all match or none is bound.
std::string outputMismatch(const PreparedOp& op, const TensorPlan& plan, const SlotTable& slots);

}  // namespace tracetwin::replay
