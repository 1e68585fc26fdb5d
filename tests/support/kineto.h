// Hand-built Kineto traces for the kineto, fidelity and prediction tests:
// small enough to know every expected number by reading the test. The ETs
// they link with come from fakeGraph (tests/support/graphs.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/kineto/kineto_trace.h"

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
// The trace of `events`, indexed in order.
core::kineto::KinetoTrace fakeKineto(std::vector<core::kineto::KinetoEvent> events);

}  // namespace tracetwin::testing
