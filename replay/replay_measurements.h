// What the replay loop measures across iterations (per op, per iteration,
// the device's kernels) and how it becomes the ReplayResult. Replay-private:
// replayer.cpp's IterationRunner fills it.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "replay/device/kernel_collector.h"
#include "replay/replay_plan.h"
#include "replay/replayer.h"

namespace tracetwin::replay {

struct Measurements {
  std::vector<std::vector<double>> cpu_us;     // [op][iteration]
  std::vector<std::vector<double>> device_us;  // [op][iteration], CUDA only
  std::vector<std::vector<double>> gap_us;     // [op][iteration], before the call
  std::vector<int> kernels;                    // last iteration
  std::vector<double> start_us;                // last iteration
  std::vector<double> iterations_ms;
  std::vector<double> outside_ops_ms;  // host time outside its ops' timed calls
  std::vector<double> host_loop_ms;    // the host's issue loop, first op to last
  std::vector<KernelRecord> last_kernels;
  // Per measured iteration, CUDA with a collector only.
  std::vector<double> busy_ms, span_ms, attributed_share, records, unattributed;
  int64_t dropped_records = 0;
  bool collected = false;
};

// A measured iteration's kernels: attributed to their ops (by correlation, the
// op's index), summarised, and kept as the last iteration's.
void addIterationKernels(const ReplayPlan& plan,
                         const std::vector<device::CollectedKernel>& kernels,
                         uint64_t dropped_records, Measurements& m);

// The medians of `m` into `result`: per op (host_wait_us(i): --host-time's
// wait before op i), replayed count and coverage (a failed op is not
// replayed), the device summary.
void fillResult(const ReplayPlan& plan, const Measurements& m, const std::vector<bool>& failed,
                const std::function<double(size_t)>& host_wait_us, ReplayResult& result);

}  // namespace tracetwin::replay
