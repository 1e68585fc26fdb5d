// The baseline of the replay-overhead benchmark: the same selected ops,
// resolved and converted exactly as the replay does, called back to back
// through the dispatcher with their stacks prepared up front and nothing
// else (no slot lookups, no result binding, no per-op clock, no releases).
// Torch-free interface: bench/ links it without including LibTorch.
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph.h"

namespace tracetwin::replay {

struct DirectDispatchTiming {
  int64_t ops = 0;                    // ops called per iteration
  std::vector<double> iterations_ms;  // measured iterations
};

// CPU only. Throws RuntimeFailure when an op fails (the baseline must run
// every op the replay runs).
DirectDispatchTiming timeDirectDispatch(const core::Graph& graph, int warmup_iters,
                                        int measured_iters, int threads);

}  // namespace tracetwin::replay
