// What a replay sets up before its first iteration, from the graph and the
// options: the device map, the intra-op threads, the recorded streams' plan,
// the Inductor cache and compiled kernels' device, and the options' checks.
// A private header of the LibTorch replay (replayer.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/graph.h"
#include "replay/compiled/compiled_kernels.h"
#include "replay/ivalue_conversion.h"
#include "replay/replay_plan.h"
#include "replay/replayer.h"
#include "replay/standins.h"
#include "replay/stream_plan.h"

namespace tracetwin::replay {

// `--device` against the trace's devices; throws UsageError for a bad name,
// UnavailableError without the CUDA device or a CUDA LibTorch.
DeviceMap deviceMapFor(const std::string& device, const core::Graph& graph);
// --threads, else the trace's meta file, else 0 (LibTorch's default).
int chooseThreads(const ReplayOptions& options, const core::Graph& graph);
// The recorded streams as a plan over this replay's ops and slots.
StreamPlan streamPlanFor(const ReplayPlan& plan, const ReplayOptions& options);
std::shared_ptr<const compiled::InductorCache> openInductorCache(const ReplayOptions& options);
compiled::KernelDeviceFactory kernelDeviceFactory(const ReplayOptions& options,
                                                  const DeviceMap& devices);
std::vector<PlannedOp> plannedOps(const core::Graph& graph, const ReplayPlan& plan);
// Throws UsageError for counts out of range or host-time settings that do not fit.
void checkOptions(const ReplayOptions& options);

}  // namespace tracetwin::replay
