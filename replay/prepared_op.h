// One selected op made ready to call: its registered operator (or a special
// handler), the argument template, where its tensors come from and where its
// results go. Calling it is the replay loop's only per-op work. Replay-private.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/graph.h"
#include "replay/ivalue_conversion.h"
#include "replay/slot_table.h"

namespace tracetwin::replay {

// Result `ret` (element `element` of a tensor list, -1 for a tensor) is the
// recorded output bound to `slot`.
struct OutputBinding {
  uint32_t ret = 0;
  int32_t element = -1;
  int32_t slot = -1;
};

struct PreparedOp {
  int64_t index = 0;  // position among the selected ops
  core::NodeId id = core::kNoNode;
  std::string name;         // as recorded
  std::string family;       // core::opFamily
  std::string skip_reason;  // non-empty: not replayed
  std::optional<c10::OperatorHandle> handle;
  // Ops without a registered schema (communication): called with the tensors
  // of `args.tensors` (plain tensors and list elements, in order); results
  // come back flattened, `outputs[i].ret` indexing them.
  std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)> special;
  ArgumentPlan args;
  std::vector<OutputBinding> outputs;
  // The casts an autocast op made before its inner call (core/autocast.h),
  // called in order right before `handle` within the op's timed span; their
  // results are bound to the recorded copies (the bf16 weight copy the
  // backward reads, autocast's cached copies). `handle` and `args` are then
  // the inner call's.
  std::vector<PreparedOp> casts;
  std::vector<int32_t> transient_inputs;  // created right before the call (SlotInfo::transient)
  std::vector<int32_t> release_after;     // slots whose last use this op is
  // Reused between calls: no allocation per call. Emptied after each call
  // (the replayer, outside the timed region): results left on it would
  // live until the op's next call, one iteration later, and be freed inside
  // that timed call (a view of the transformer's 512 MB logits took 36-38 ms
  // unmapping the previous iteration's).
  c10::Stack stack;

  bool runnable() const { return skip_reason.empty(); }
};

// Builds the stack, calls the op, binds its results. Exceptions propagate.
void callPreparedOp(PreparedOp& op, SlotTable& slots);

}  // namespace tracetwin::replay
