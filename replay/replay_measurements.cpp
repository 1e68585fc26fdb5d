#include "replay/replay_measurements.h"

#include <algorithm>

#include "core/statistics.h"
#include "replay/device/kernel_attribution.h"

namespace tracetwin::replay {

using core::median;

void addIterationKernels(const ReplayPlan& plan,
                         const std::vector<device::CollectedKernel>& kernels,
                         uint64_t dropped_records, Measurements& m) {
  std::vector<double> sum(plan.ops.size(), 0.0);
  std::fill(m.kernels.begin(), m.kernels.end(), 0);
  m.last_kernels.clear();
  const uint64_t origin = kernels.empty() ? 0 : kernels.front().start_ns;
  for (const auto& k : kernels) {
    if (k.op_correlation < sum.size()) {
      sum[k.op_correlation] += k.durationNs() / 1e3;
      ++m.kernels[k.op_correlation];
    }
    const core::NodeId op =
        k.op_correlation < plan.ops.size() ? plan.ops[size_t(k.op_correlation)].id : core::kNoNode;
    m.last_kernels.push_back({k.name, k.stream, (k.start_ns - origin) / 1e3, k.durationNs() / 1e3,
                              op, device::kindName(k.kind)});
  }
  for (size_t i = 0; i < sum.size(); ++i) m.device_us[i].push_back(sum[i]);
  const device::IterationDeviceTime summary = device::summarizeDeviceTime(kernels);
  m.collected = true;
  m.busy_ms.push_back(summary.busy_union_ns / 1e6);
  m.span_ms.push_back(summary.span_ns / 1e6);
  m.attributed_share.push_back(summary.covered_share);
  m.records.push_back(double(kernels.size()));
  m.unattributed.push_back(double(summary.unattributed_records));
  m.dropped_records += int64_t(dropped_records);
}

void fillResult(const ReplayPlan& plan, const Measurements& m, const std::vector<bool>& failed,
                const std::function<double(size_t)>& host_wait_us, ReplayResult& result) {
  result.iterations_ms = m.iterations_ms;
  result.iteration_ms_median = median(m.iterations_ms);
  result.outside_ops_ms = median(m.outside_ops_ms);
  result.host_loop_ms = median(m.host_loop_ms);
  result.kernels = m.last_kernels;
  int64_t replayed = 0;
  for (const PreparedOp& op : plan.ops) {
    if (!op.runnable()) continue;
    const auto i = size_t(op.index);
    if (!failed[i] && !m.cpu_us[i].empty()) ++replayed;
    OpMeasurement pm;
    pm.id = op.id;
    pm.name = op.name;
    pm.family = op.family;
    pm.cpu_us = median(m.cpu_us[i]);
    pm.device_us = median(m.device_us[i]);
    pm.kernels = m.kernels[i];
    pm.start_us = m.start_us[i];
    pm.gap_us = median(m.gap_us[i]);
    pm.host_wait_us = host_wait_us(i);
    pm.last_cpu_us = m.cpu_us[i].empty() ? 0.0 : m.cpu_us[i].back();
    result.per_op.push_back(std::move(pm));
  }
  result.replayed_ops = replayed;
  result.coverage = result.selected_ops ? double(replayed) / double(result.selected_ops) : 0.0;
  if (m.collected) {
    DeviceSummary& d = result.device_summary;
    d.collected = true;
    d.busy_ms = median(m.busy_ms);
    d.busy_share = result.iteration_ms_median > 0 ? d.busy_ms / result.iteration_ms_median : 0.0;
    d.span_ms = median(m.span_ms);
    d.attributed_share = median(m.attributed_share);
    d.records = int64_t(median(m.records));
    d.unattributed_records = int64_t(median(m.unattributed));
    d.dropped_records = m.dropped_records;
    d.kernels_per_op = replayed ? double(d.records) / double(replayed) : 0.0;
  }
}

}  // namespace tracetwin::replay
