// Hand-built Kineto traces for the kineto, fidelity and prediction tests:
// small enough to know every expected number by reading the test. The ETs
// they link with come from fakeGraph (tests/support/graphs.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/kineto/kineto_trace.h"
#include "core/kineto/linker.h"

namespace tracetwin::testing {

// A CPU op on host thread `tid` (pid 100), ts/dur in us.
core::kineto::KinetoEvent cpuOp(const std::string& name, int64_t tid, double ts, double dur,
                                int64_t seq = -1);
// A CUDA runtime call (cudaLaunchKernel, ...) with its correlation id.
core::kineto::KinetoEvent launch(const std::string& api, int64_t tid, double ts, double dur,
                                 int64_t correlation);
// A kernel on `stream`, correlated with its launch.
core::kineto::KinetoEvent kernel(const std::string& name, int64_t stream, double ts, double dur,
                                 int64_t correlation);
// A top-level op of a linked timeline, matched to its Kineto op on thread
// `tid` over [start, start + dur) us, without kernels.
core::kineto::LinkedOp linkedOp(core::NodeId id, const std::string& name, int64_t tid, double start,
                                double dur);
// The trace of `events`, indexed in order.
core::kineto::KinetoTrace fakeKineto(std::vector<core::kineto::KinetoEvent> events);

}  // namespace tracetwin::testing
