// Selected ops that are not called through the dispatcher by schema:
// communication (record_param_comms) and Triton kernels. A registry keyed by
// op kind says whether each can replay here, and how. Replay-private.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/graph.h"
#include "replay/comm/comm_replayer.h"

namespace tracetwin::replay {

struct SpecialOpContext {
  std::string device;  // "cpu", "cuda:0"
  // The one-rank process group, created on the first collective that needs it.
  std::unique_ptr<comm::CommReplayer> comm;
  std::string comm_error;  // why it could not be created
  bool comm_tried = false;
};

// Takes the op's input tensors (flattened, undefined ones included) and
// returns its result tensors flattened like the recorded outputs.
using SpecialOpFn = std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>;

struct SpecialOpPlan {
  std::string skip_reason;  // non-empty: not replayed
  SpecialOpFn run;
};

struct SpecialOp {
  std::string description;
  std::function<SpecialOpPlan(const core::Node&, SpecialOpContext&)> plan;
};

// The handler for `node`, nullptr when it is an ordinary dispatcher op.
const SpecialOp* findSpecialOp(const core::Node& node);

// Registry keys: "record_param_comms", "triton".
const std::vector<std::pair<std::string, SpecialOp>>& specialOpRegistry();

}  // namespace tracetwin::replay
