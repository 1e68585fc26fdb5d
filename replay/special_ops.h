// Selected ops that are not called through the dispatcher by schema:
// communication (record_param_comms, c10d ops), Triton kernels, and stream
// bookkeeping that has no meaning on a CPU. A registry keyed by
// op kind says whether each can replay here, and how. Replay-private.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/graph.h"
#include "replay/comm/comm_replayer.h"
#include "replay/compiled/compiled_kernels.h"

namespace tracetwin::replay {

struct SpecialOpContext {
  std::string device;  // "cpu", "cuda:0"
  // A distributed replay's groups (replay/dist/rank_session.h), not owned;
  // null: a one-rank process group is created on the first collective.
  comm::CommReplayer* distributed_comm = nullptr;
  std::unique_ptr<comm::CommReplayer> comm;  // the one-rank group
  std::string comm_error;  // why it could not be created
  bool comm_tried = false;
  // Triton kernels of compiled steps: launched from Inductor's cache when
  // they can be (mode 1); null when the replay has no compiled kernels.
  compiled::CompiledKernels* compiled = nullptr;
};

// Takes the op's input tensors (flattened, undefined ones included) and
// returns its result tensors flattened like the recorded outputs.
using SpecialOpFn = std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>;

struct SpecialOpPlan {
  std::string skip_reason;  // non-empty: not replayed
  SpecialOpFn run;
  // Non-empty: the op is replayed as this instead, and the report says so
  // ("nothing: CPU tensors have no streams").
  std::string substituted_by;
};

struct SpecialOp {
  std::string description;
  std::function<SpecialOpPlan(const core::Node&, SpecialOpContext&)> plan;
};

// The handler for `node` in a replay on `context.device`, nullptr when it is
// an ordinary dispatcher op there.
const SpecialOp* findSpecialOp(const core::Node& node, const SpecialOpContext& context);

// Registry keys: "record_param_comms", "triton", "aten::record_stream" (CPU).
const std::vector<std::pair<std::string, SpecialOp>>& specialOpRegistry();

}  // namespace tracetwin::replay
