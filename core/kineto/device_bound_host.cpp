#include "core/kineto/device_bound_host.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>

#include "core/kineto/profiler_stalls.h"

namespace tracetwin::core::kineto {
namespace {

// Runtime calls that return only when the device has caught up: the host's
// time inside them is a wait for the device, not host work.
bool isSynchronisingCall(const KinetoEvent& e) {
  if (!isLaunchCategory(e.category)) return false;
  const std::string_view name(e.name);
  return name.find("Synchronize") != std::string_view::npos || name == "cudaMemcpy";
}

struct SyncCall {
  double ts = 0;
  double dur = 0;
};

}  // namespace

std::vector<OpDeviceWork> opDeviceWork(const LinkedTimeline& timeline, const KinetoTrace& trace,
                                       const RecordedHostTime& host) {
  std::unordered_map<int64_t, double> launch_ts;  // correlation -> the launch's start
  std::map<int64_t, std::vector<SyncCall>> syncs_by_thread;
  for (const KinetoEvent& e : trace.events) {
    if (!isLaunchCategory(e.category)) continue;
    if (e.correlation != kAbsent) launch_ts.emplace(e.correlation, e.ts);
    if (isSynchronisingCall(e)) syncs_by_thread[e.tid].push_back({e.ts, e.dur});
  }
  for (auto& [tid, calls] : syncs_by_thread) {
    std::stable_sort(calls.begin(), calls.end(),
                     [](const SyncCall& a, const SyncCall& b) { return a.ts < b.ts; });
  }
  // Offsets in the op's recorded time without the profiler's stalls, as
  // recordedHostTime gives the op's own time.
  const ProfilerStalls stalls(trace);
  std::vector<OpDeviceWork> out;
  out.reserve(host.ops.size());
  for (const LinkedOp& op : timeline.ops) {
    if (!op.matched) continue;
    OpDeviceWork w;
    const double end = op.start_us + op.duration_us;
    const double op_us = std::max(op.duration_us - stalls.within(op.start_us, end), 0.0);
    auto offset = [&](double at) {
      return std::clamp(at - op.start_us - stalls.within(op.start_us, at), 0.0, op_us);
    };
    for (const LinkedKernel& k : op.kernels) {
      auto it = launch_ts.find(k.correlation);
      const double at = it != launch_ts.end() ? it->second : k.start_us;
      w.kernels.push_back({offset(at), k.stream, std::max(k.duration_us, 0.0)});
    }
    auto thread = syncs_by_thread.find(op.kineto_tid);
    if (thread != syncs_by_thread.end()) {
      const std::vector<SyncCall>& calls = thread->second;
      auto first = std::lower_bound(calls.begin(), calls.end(), op.start_us,
                                    [](const SyncCall& c, double t) { return c.ts < t; });
      for (auto c = first; c != calls.end() && c->ts < end; ++c) {
        const double wait = std::min(c->dur, end - c->ts) - stalls.within(c->ts, c->ts + c->dur);
        w.syncs.push_back({offset(c->ts), std::clamp(wait, 0.0, op_us)});
      }
    }
    out.push_back(std::move(w));
    if (out.size() == host.ops.size()) break;
  }
  out.resize(host.ops.size());
  return out;
}

double simulatedStepUs(const std::vector<RecordedHostOp>& ops,
                       const std::vector<OpDeviceWork>& work, const ProfilerCorrection& fix) {
  std::map<int64_t, double> stream_free;
  double device_done = 0;
  // The replay keeps each op to the original's schedule: it waits until an
  // op's scheduled start, and an op that runs late (a longer wait for the
  // device than recorded) delays the next ones until their waits absorb it.
  double scheduled = 0;
  double host = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const RecordedHostOp& op = ops[i];
    const double op_us = fix.apply(op.recorded_op_us, op.op_events);
    scheduled += fix.apply(op.recorded_gap_us, op.gap_events);
    const double start = std::max(scheduled, host);
    scheduled += op_us;
    // Launches and waits keep their place in the op, scaled with it.
    const double stretch = op.recorded_op_us > 0 ? op_us / op.recorded_op_us : 0.0;
    double shift = 0;  // what the simulated waits add to (or take from) the op
    const OpDeviceWork* w = i < work.size() ? &work[i] : nullptr;
    size_t k = 0;
    size_t s = 0;
    while (w && (k < w->kernels.size() || s < w->syncs.size())) {
      const bool kernel_first =
          s >= w->syncs.size() ||
          (k < w->kernels.size() && w->kernels[k].launch_offset_us <= w->syncs[s].offset_us);
      if (kernel_first) {
        const OpDeviceWork::Kernel& kernel = w->kernels[k++];
        const double launched = start + kernel.launch_offset_us * stretch + shift;
        double& free = stream_free[kernel.stream];
        free = std::max(launched, free) + kernel.duration_us;
        device_done = std::max(device_done, free);
      } else {
        const OpDeviceWork::Sync& sync = w->syncs[s++];
        const double reached = start + sync.offset_us * stretch + shift;
        shift += std::max(reached, device_done) - reached - sync.recorded_us * stretch;
      }
    }
    host = std::max(scheduled, start + op_us + shift);
  }
  return std::max(host, device_done);
}

HostSpanTarget hostSpanTarget(const std::vector<RecordedHostOp>& ops, int64_t events,
                              const std::vector<OpDeviceWork>& work, double step_us,
                              bool synchronising_steps) {
  double recorded = 0;
  for (const RecordedHostOp& op : ops) recorded += op.recorded_gap_us + op.recorded_op_us;
  HostSpanTarget t;
  t.host_us = std::min(recorded, step_us);
  const bool any_kernel = std::any_of(work.begin(), work.end(), [](const OpDeviceWork& w) {
    return !w.kernels.empty();
  });
  const bool any_sync = std::any_of(work.begin(), work.end(), [](const OpDeviceWork& w) {
    return !w.syncs.empty();
  });
  if (step_us <= 0 || !any_kernel) return t;
  auto simulate = [&](double host_us) {
    return simulatedStepUs(ops, work, correctionForSpan(ops, events, host_us));
  };
  t.device_only_us = simulate(0.0);
  t.simulated_step_us = simulate(t.host_us);
  // 2%: the kernels that trail a host-bound step's last op lengthen it a
  // little without the host being too slow.
  if (t.simulated_step_us <= 1.02 * step_us) return t;
  // With synchronising calls the replay does not follow the simulation:
  // each call's own time in the warm-up holds a wait for the device that the
  // timed iterations, slowed by the host waits, do not have, and the replay
  // takes that back from later waits (replay/host_time.h). The H100 encoder
  // and decoder steps (30-106 calls) replayed at 1.007-1.019 of their
  // originals aimed at the step, where this simulation said 1.20-1.22. So
  // for a replay only a step without them gets the shorter span; a
  // prediction's T1-T5 take it (their own T1-T5 then predict those steps at
  // 1.00-1.05 of the original, against 1.13-1.32 aimed at the step).
  t.sync_calls = any_sync;
  if (any_sync && !synchronising_steps) return t;
  // A half-percent margin over the device-only step finds the knee when the
  // device alone already exceeds the step.
  const double goal = std::max(step_us, t.device_only_us + 0.005 * step_us);
  double lo = 0;
  double hi = t.host_us;
  for (int i = 0; i < 40 && hi - lo > 1e-3; ++i) {
    const double mid = 0.5 * (lo + hi);
    (simulate(mid) <= goal ? lo : hi) = mid;
  }
  t.host_us = lo;
  t.device_bound = true;
  t.simulated_step_us = simulate(lo);
  return t;
}

}  // namespace tracetwin::core::kineto
