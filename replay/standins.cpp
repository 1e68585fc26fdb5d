#include "replay/standins.h"

namespace tracetwin::replay {
namespace {

double positiveOr0(const std::unordered_map<core::NodeId, double>& m, core::NodeId id) {
  auto it = m.find(id);
  return it != m.end() && it->second > 0 ? it->second : 0.0;
}

}  // namespace

StandInPlan planStandIns(const std::vector<PlannedOp>& ops, const ReplayOptions& options,
                         const core::CompiledSummary& summary) {
  StandInPlan p;
  p.per_op.resize(ops.size());
  CompiledReplay& c = p.compiled;
  c.kernels = summary.kernels;
  c.forward_kernels = summary.forward_kernels;
  c.backward_kernels = summary.backward_kernels;
  c.regions = static_cast<int64_t>(summary.regions.size());
  c.regions_without_kernels = summary.regions_without_kernels;
  c.warnings = summary.warnings;
  c.inductor_cache = options.inductor_cache;
  for (size_t i = 0; i < ops.size(); ++i) {
    const PlannedOp& op = ops[i];
    if (op.runnable) {
      c.launched += op.compiled_kernel ? 1 : 0;
      continue;
    }
    StandIn& s = p.per_op[i];
    s.host_us = positiveOr0(options.placeholder_us, op.id);
    std::string source = "recorded";
    if (op.compiled_kernel) {
      // Mode 2, the original's own kernel time, before mode 3, a model's.
      if (double us = positiveOr0(options.recorded_device_us, op.id); us > 0) {
        s.device_us = us;
        ++c.recorded_standins;
        c.recorded_standin_us += us;
      } else if (double predicted = positiveOr0(options.predicted_device_us, op.id);
                 predicted > 0) {
        s.device_us = predicted;
        source = "predicted";
        ++c.predicted_standins;
        c.predicted_standin_us += predicted;
      } else {
        ++c.not_stood_in;
      }
    }
    if (s.host_us > 0 || s.device_us > 0) {
      p.placeholders.push_back({op.id, op.name, s.host_us, s.device_us, source});
    }
  }
  return p;
}

}  // namespace tracetwin::replay
