#include "core/kineto/recorded_host_time.h"

#include <algorithm>
#include <map>
#include <string_view>

#include "core/kineto/device_bound_host.h"
#include "core/kineto/profiler_stalls.h"

namespace tracetwin::core::kineto {
namespace {

double correctedSum(const std::vector<RecordedHostOp>& ops, const ProfilerCorrection& fix) {
  double sum = 0;
  for (const RecordedHostOp& op : ops) {
    sum += fix.apply(op.recorded_gap_us, op.gap_events) + fix.apply(op.recorded_op_us, op.op_events);
  }
  return sum;
}

struct OpSpan {
  double start = 0;
  double end = 0;
  size_t op = 0;  // index into RecordedHostTime::ops
};

// Charges each recorded CPU event on the linked ops' threads to the op whose
// span holds it on its thread, else to the gap of the next op to start.
void countEvents(const LinkedTimeline& timeline, const KinetoTrace& trace,
                 const std::vector<size_t>& linked, RecordedHostTime* out, double span_start,
                 double span_end) {
  std::map<int64_t, std::vector<OpSpan>> by_thread;
  std::vector<OpSpan> by_start;
  for (size_t k = 0; k < linked.size(); ++k) {
    const LinkedOp& op = timeline.ops[linked[k]];
    const OpSpan s{op.start_us, op.start_us + op.duration_us, k};
    by_thread[op.kineto_tid].push_back(s);
    by_start.push_back(s);
  }
  auto earlier = [](const OpSpan& a, const OpSpan& b) { return a.start < b.start; };
  for (auto& [tid, spans] : by_thread) std::stable_sort(spans.begin(), spans.end(), earlier);
  std::stable_sort(by_start.begin(), by_start.end(), earlier);
  for (const KinetoEvent& e : trace.events) {
    if (!isProfilerRecord(e) || e.ts < span_start || e.ts >= span_end) continue;
    auto thread = by_thread.find(e.tid);
    if (thread == by_thread.end()) continue;
    const std::vector<OpSpan>& spans = thread->second;
    auto after = std::upper_bound(spans.begin(), spans.end(), OpSpan{e.ts, e.ts, 0}, earlier);
    if (after != spans.begin()) {
      const OpSpan& holder = *(after - 1);
      if (e.ts < holder.end || e.ts == holder.start) {
        ++out->ops[holder.op].op_events;
        ++out->events;
        continue;
      }
    }
    auto next = std::upper_bound(by_start.begin(), by_start.end(), OpSpan{e.ts, e.ts, 0}, earlier);
    if (next == by_start.end()) continue;
    ++out->ops[next->op].gap_events;
    ++out->events;
  }
}

}  // namespace

ProfilerCorrection correctionForSpan(const std::vector<RecordedHostOp>& ops, int64_t events,
                                     double host_us) {
  if (host_us <= 0) return ProfilerCorrection{0.0, 0.0};
  return profilerCorrection(ops, events, host_us);
}

bool isProfilerRecord(const KinetoEvent& e) {
  if (!isCpuRange(e.category) && !isLaunchCategory(e.category)) return false;
  // The step's own span encloses everything; it is not a record inside it.
  return std::string_view(e.name).rfind("ProfilerStep#", 0) != 0;
}

ProfilerCorrection profilerCorrection(const std::vector<RecordedHostOp>& ops, int64_t events,
                                      double target_us) {
  ProfilerCorrection c;
  const double recorded = correctedSum(ops, ProfilerCorrection{});
  if (target_us <= 0 || recorded <= target_us) return c;
  if (events > 0) c.per_event_us = (recorded - target_us) / double(events);
  const double left = correctedSum(ops, ProfilerCorrection{c.per_event_us, 1.0});
  if (left > target_us) c.scale = target_us / left;
  return c;
}

RecordedHostTime recordedHostTime(const LinkedTimeline& timeline, const KinetoTrace& trace,
                                  double unprofiled_ms, HostTimeFor use) {
  RecordedHostTime out;
  out.unprofiled_ms = std::max(unprofiled_ms, 0.0);
  out.lead_in = timeline.iteration_source.rfind("ProfilerStep", 0) == 0;
  std::vector<size_t> linked;
  double latest_end = 0;
  const ProfilerStalls stalls(trace);
  double stalled = 0;
  // The recorded time of [from, to), without the profiler's stalls in it.
  auto recorded = [&](double from, double to) {
    if (to <= from) return 0.0;
    const double stall = std::min(stalls.within(from, to), to - from);
    stalled += stall;
    return to - from - stall;
  };
  for (size_t i = 0; i < timeline.ops.size(); ++i) {
    const LinkedOp& op = timeline.ops[i];
    if (!op.matched) continue;
    RecordedHostOp r;
    r.id = op.id;
    r.name = op.name;
    const double end = op.start_us + std::max(op.duration_us, 0.0);
    r.recorded_op_us = recorded(op.start_us, end);
    if (linked.empty()) {
      r.recorded_gap_us = out.lead_in ? recorded(timeline.iteration_start_us, op.start_us) : 0;
    } else {
      // From the latest end so far: ops of another thread may overlap.
      r.recorded_gap_us = recorded(latest_end, op.start_us);
    }
    latest_end = linked.empty() ? end : std::max(latest_end, end);
    linked.push_back(i);
    out.ops.push_back(std::move(r));
  }
  if (out.ops.empty()) return out;
  const double span_start = out.lead_in ? timeline.iteration_start_us
                                        : timeline.ops[linked.front()].start_us;
  countEvents(timeline, trace, linked, &out, span_start, latest_end);
  double recorded_us = 0;
  for (const RecordedHostOp& op : out.ops) recorded_us += op.recorded_gap_us + op.recorded_op_us;
  out.recorded_span_ms = recorded_us / 1000.0;
  out.profiler_stall_ms = stalled / 1000.0;
  double target_us = out.unprofiled_ms * 1000.0;
  if (target_us > 0) {
    const HostSpanTarget t =
        hostSpanTarget(out.ops, out.events, opDeviceWork(timeline, trace, out), target_us,
                       /*synchronising_steps=*/use == HostTimeFor::kPrediction);
    target_us = t.host_us;
    out.device_bound = t.device_bound;
    out.simulated_step_ms = t.simulated_step_us / 1000.0;
    out.device_only_ms = t.device_only_us / 1000.0;
    out.sync_calls = t.sync_calls;
  }
  out.target_ms = target_us / 1000.0;
  const ProfilerCorrection fix = out.unprofiled_ms > 0
                                     ? correctionForSpan(out.ops, out.events, target_us)
                                     : ProfilerCorrection{};
  out.profiler_us_per_event = fix.per_event_us;
  out.profiler_scale = fix.scale;
  double span = 0;
  for (RecordedHostOp& op : out.ops) {
    op.gap_us = fix.apply(op.recorded_gap_us, op.gap_events);
    op.op_us = fix.apply(op.recorded_op_us, op.op_events);
    span += op.gap_us + op.op_us;
  }
  out.span_ms = span / 1000.0;
  return out;
}

}  // namespace tracetwin::core::kineto
