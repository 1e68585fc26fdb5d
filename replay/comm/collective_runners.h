// How each collective is issued on a c10d group: one registry entry per
// Collective. Private to replay/comm.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <utility>
#include <vector>

#include "replay/comm/c10d_backend.h"
#include "replay/comm/collective_names.h"

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
  // Non-null: the runner leaves the works it issued here instead of waiting
  // for them (an asynchronous collective; the caller waits later). A runner
  // that needs its results to finish (a local sum after an all_to_all)
  // waits anyway.
  std::vector<WorkHandle>* deferred = nullptr;
};

using CollectiveRunner = std::vector<at::Tensor> (*)(RunContext& ctx);

// nullptr for collectives that cannot be issued on one rank (send, recv).
CollectiveRunner findRunner(Collective kind);
// Other ways to issue `kind` with the same bytes on the wire, for backends
// that lack the first (Gloo in LibTorch 1.13: no *_base gathers, no
// reduce_scatter, no list all_to_all), in order of preference.
struct FallbackRunner {
  CollectiveRunner runner;
  const char* how;  // "all_to_all_single of the chunks and a local sum"
};
std::vector<FallbackRunner> findFallbackRunners(Collective kind);

}  // namespace tracetwin::replay::comm
