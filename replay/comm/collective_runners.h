// How each collective is issued on a c10d group: one registry entry per
// Collective. Private to replay/comm.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <utility>
#include <vector>

#include "replay/comm/c10d_backend.h"
#include "replay/comm/collective_spec.h"

namespace tracetwin::replay::comm {

// Result tensors of out-of-place collectives, kept per (node, slot) and
// reused while their shape and type match, so measured iterations do not
// allocate (the first, warm-up iteration does).
class OutputCache {
 public:
  at::Tensor get(int64_t node, size_t slot, at::IntArrayRef sizes,
                 const at::TensorOptions& options);

 private:
  std::map<std::pair<int64_t, size_t>, at::Tensor> tensors_;
};

struct RunContext {
  C10dBackend& group;
  const CollectiveSpec& spec;
  const std::vector<at::Tensor>& inputs;
  OutputCache& outputs;
  int64_t node;
};

using CollectiveRunner = std::vector<at::Tensor> (*)(RunContext& ctx);

// nullptr for collectives that cannot be issued on one rank (send, recv).
CollectiveRunner findRunner(Collective kind);
// A second way to issue `kind` when the backend lacks the first (the list
// API on views for the *_base collectives); nullptr when there is none.
CollectiveRunner findFallbackRunner(Collective kind);

}  // namespace tracetwin::replay::comm
