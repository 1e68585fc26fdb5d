// What stands in for each selected op the replay cannot run: the host's
// busy wait of the op's recorded CPU time (ReplayOptions::placeholder_us)
// and, for a compiled region's Triton kernel, a device-side wait of its
// recorded (mode 2) or predicted (mode 3) kernel time. Also counts the
// compiled kernels by mode for the report. Stand-ins never count as
// replayed. Torch-free.
#pragma once

#include <string>
#include <vector>

#include "core/compiled_regions.h"
#include "core/graph.h"
#include "replay/replayer.h"

namespace tracetwin::replay {

// One selected op, as the plan left it.
struct PlannedOp {
  core::NodeId id = core::kNoNode;
  std::string name;
  bool runnable = false;
  bool compiled_kernel = false;  // kernel_backend "triton"
};

struct StandIn {
  double host_us = 0;
  double device_us = 0;
};

struct StandInPlan {
  std::vector<StandIn> per_op;  // by op index; zeros: nothing stands in
  std::vector<Placeholder> placeholders;
  CompiledReplay compiled;
};

StandInPlan planStandIns(const std::vector<PlannedOp>& ops, const ReplayOptions& options,
                         const core::CompiledSummary& summary);

}  // namespace tracetwin::replay
