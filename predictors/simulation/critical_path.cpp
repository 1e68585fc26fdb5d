// The simulation walks ops in issue order. Each op advances its thread's CPU
// clock by its overheads and enqueues its kernels on its stream; a kernel
// starts when its stream is free, it has been launched, the stream it waits
// on has drained, and (collectives) the slowest rank has arrived.
//
// Issue order is start order across threads (trace ids count op starts), and
// where it passes from one thread to another the new thread waits for the
// old one: training traces switch threads where the main thread blocks in
// backward() while the autograd engine's device thread runs the backward ops,
// and again where backward() returns. The Kineto traces of the H100 captures
// and the DLRM ranks show each switch as a hand-over (the next thread's first
// op starts 150-860 us after the other thread's last op ended, profiled).
#include "predictors/simulation/critical_path.h"

#include "core/intervals.h"

#include <algorithm>
#include <unordered_map>

namespace tracetwin::predictors {
namespace {

struct Interval {
  double start, end;
  bool comm;
  SimWait reason;
};

// Length of the union of [start, end) intervals (sorted by start).
void summarise(std::vector<Interval> iv, double iteration, SimResult* r) {
  std::vector<std::pair<double, double>> all, comm, compute;
  for (const Interval& i : iv) {
    all.push_back({i.start, i.end});
    (i.comm ? comm : compute).push_back({i.start, i.end});
  }
  r->device_active_us = core::unionLength(all);
  r->device_idle_us = std::max(0.0, iteration - r->device_active_us);
  // Exposed communication: comm time not hidden under compute, i.e.
  // |comm U compute| - |compute|.
  r->exposed_comm_us = std::max(0.0, r->device_active_us - core::unionLength(compute));
  // CPU-bound: device gaps that end with a kernel waiting for its launch (or
  // for a stream that was itself launch-limited), plus the tail after the
  // last kernel while the CPU finishes. Gaps that end on a rank arrival are
  // waiting for other ranks, not for this CPU.
  std::sort(iv.begin(), iv.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  double covered_to = 0;
  for (const Interval& i : iv) {
    if (i.start > covered_to && i.reason != SimWait::kRanks)
      r->cpu_bound_us += i.start - covered_to;
    covered_to = std::max(covered_to, i.end);
  }
  r->cpu_bound_us += std::max(0.0, iteration - covered_to);
}

}  // namespace

SimResult simulate(const std::vector<SimOp>& ops, bool keep_schedule) {
  SimResult r;
  r.start_us.resize(ops.size());
  r.end_us.resize(ops.size());
  if (keep_schedule) r.schedule.resize(ops.size());
  std::unordered_map<int64_t, double> cpu;          // thread -> CPU clock
  std::unordered_map<int64_t, double> stream_free;  // stream -> when its last kernel ends
  std::vector<Interval> intervals;
  intervals.reserve(ops.size());
  double horizon = 0;
  const SimOp* previous = nullptr;
  for (size_t i = 0; i < ops.size(); ++i) {
    const SimOp& op = ops[i];
    double& clock = cpu[op.thread];
    if (previous && previous->thread != op.thread) clock = std::max(clock, cpu[previous->thread]);
    previous = &op;
    clock += op.t1;
    if (op.cpu_only) {
      // CPU device: the op body runs on its thread; that is the device time.
      r.start_us[i] = clock;
      clock += op.t2 + op.device_us + op.t3;
      r.end_us[i] = clock;
      if (keep_schedule) r.schedule[i] = {r.start_us[i], clock, -1, {}};
      if (op.device_us > 0)
        intervals.push_back({r.start_us[i] + op.t2, r.start_us[i] + op.t2 + op.device_us,
                             op.is_comm, SimWait::kNone});
      horizon = std::max(horizon, clock);
      continue;
    }
    double op_start = clock;
    clock += op.t2;
    double& free = stream_free[op.stream];
    double first = -1, last = op_start;
    int launches = std::max(op.launches, 0);
    double per_kernel = launches ? op.device_us / launches : 0.0;
    for (int k = 0; k < launches; ++k) {
      if (k > 0) clock += op.t5;
      clock += op.t4;  // the kernel is enqueued when the launch call returns
      double start = clock;
      SimWait reason = SimWait::kNone;
      auto later = [&](double t, SimWait why) {
        if (t > start) {
          start = t;
          reason = why;
        }
      };
      later(free, SimWait::kStream);
      if (op.wait_stream >= 0 && op.wait_stream != op.stream)
        later(stream_free[op.wait_stream], SimWait::kDependency);
      if (op.rank_arrival_us >= 0) later(op.rank_arrival_us, SimWait::kRanks);
      double end = start + per_kernel;
      free = end;
      intervals.push_back({start, end, op.is_comm, reason});
      if (keep_schedule) r.schedule[i].kernels.push_back({clock, start, end, reason});
      if (first < 0) first = start;
      last = end;
    }
    if (launches == 0) clock += op.t5;  // an op without kernels: its whole CPU time
    clock += op.t3;
    if (keep_schedule) {
      r.schedule[i].cpu_start_us = op_start;
      if (op.sync && free > clock) r.schedule[i].sync_wait_from_us = clock;
    }
    if (op.sync) clock = std::max(clock, free);
    if (keep_schedule) r.schedule[i].cpu_end_us = clock;
    r.start_us[i] = first < 0 ? op_start : first;
    r.end_us[i] = launches ? last : clock;
    horizon = std::max({horizon, clock, free});
  }
  r.iteration_us = horizon;
  summarise(std::move(intervals), horizon, &r);
  return r;
}

}  // namespace tracetwin::predictors
