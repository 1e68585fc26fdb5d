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

#include <algorithm>

#include "core/intervals.h"

namespace tracetwin::predictors {

RankTimeline::RankTimeline(const std::vector<SimOp>& ops, double start_us, bool keep_schedule)
    : ops_(ops), start_us_(start_us), horizon_(start_us), keep_schedule_(keep_schedule) {
  if (keep_schedule_) r_.schedule.resize(ops.size());
  r_.start_us.resize(ops.size());
  r_.end_us.resize(ops.size());
  r_.wait_of.assign(ops.size(), 0.0);
  intervals_.reserve(ops.size());
}

double RankTimeline::handedOverClock(const SimOp& op) const {
  const double* own = cpu_.find(op.thread);
  double clock = own == nullptr ? start_us_ : *own;
  if (next_ > 0 && ops_[next_ - 1].thread != op.thread) {
    const double* prev = cpu_.find(ops_[next_ - 1].thread);
    if (prev != nullptr) clock = std::max(clock, *prev);
  }
  return clock;
}

double& RankTimeline::threadClock(const SimOp& op) {
  const double clock = handedOverClock(op);
  double& c = cpu_.at(op.thread, clock);
  c = clock;
  return c;
}

double RankTimeline::readyUs() const {
  const SimOp& op = ops_[next_];
  auto freeOf = [this](int64_t stream) {
    const double* free = stream_free_.find(stream);
    return free == nullptr ? start_us_ : *free;
  };
  double clock = handedOverClock(op) + op.t1;
  if (op.cpu_only) {
    if (op.wait_stream >= 0) clock = std::max(clock, freeOf(op.wait_stream));
    return clock;
  }
  double start = clock + op.t2 + (op.launches > 0 ? op.t4 : 0.0);
  start = std::max(start, freeOf(op.stream));
  if (op.wait_stream >= 0 && op.wait_stream != op.stream)
    start = std::max(start, freeOf(op.wait_stream));
  if (op.rank_arrival_us >= 0) start = std::max(start, op.rank_arrival_us);
  return start;
}

void RankTimeline::advance(double group_start_us, double device_us) {
  const size_t i = next_;
  const SimOp& op = ops_[i];
  const double ready = group_start_us >= 0 ? readyUs() : 0.0;
  const double total_device = device_us >= 0 ? device_us : op.device_us;
  double& clock = threadClock(op);
  auto freeOf = [this](int64_t stream) -> double& { return stream_free_.at(stream, start_us_); };
  clock += op.t1;
  ++next_;
  if (op.cpu_only) {
    // CPU device: the op body runs on its thread; that is the device time.
    // Its inputs may come from an asynchronous collective still running.
    if (op.wait_stream >= 0) clock = std::max(clock, freeOf(op.wait_stream));
    r_.start_us[i] = clock;
    clock += op.t2 + total_device + op.t3;
    r_.end_us[i] = clock;
    if (keep_schedule_) r_.schedule[i] = {r_.start_us[i], clock, -1, {}};
    if (total_device > 0)
      intervals_.push_back({r_.start_us[i] + op.t2, r_.start_us[i] + op.t2 + total_device,
                            op.is_comm, SimWait::kNone});
    horizon_ = std::max(horizon_, clock);
    return;
  }
  double op_start = clock;
  clock += op.t2;
  double first = -1, last = op_start;
  const int launches = std::max(op.launches, 0);
  const double per_kernel = launches ? total_device / launches : 0.0;
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
    later(freeOf(op.stream), SimWait::kStream);
    if (op.wait_stream >= 0 && op.wait_stream != op.stream)
      later(freeOf(op.wait_stream), SimWait::kDependency);
    if (op.rank_arrival_us >= 0) later(op.rank_arrival_us, SimWait::kRanks);
    if (k == 0 && group_start_us >= 0) later(group_start_us, SimWait::kRanks);
    const double end = start + per_kernel;
    freeOf(op.stream) = end;
    intervals_.push_back({start, end, op.is_comm, reason});
    if (keep_schedule_) r_.schedule[i].kernels.push_back({clock, start, end, reason});
    if (first < 0) first = start;
    last = end;
  }
  if (launches == 0) clock += op.t5;  // an op without kernels: its whole CPU time
  clock += op.t3;
  if (keep_schedule_) {
    r_.schedule[i].cpu_start_us = op_start;
    if (op.sync && freeOf(op.stream) > clock) r_.schedule[i].sync_wait_from_us = clock;
  }
  if (op.sync) clock = std::max(clock, freeOf(op.stream));
  if (keep_schedule_) r_.schedule[i].cpu_end_us = clock;
  r_.start_us[i] = first < 0 ? op_start : first;
  r_.end_us[i] = launches ? last : clock;
  if (group_start_us > ready && launches > 0) {
    r_.wait_of[i] = group_start_us - ready;
    waits_.push_back({ready, group_start_us});
  }
  horizon_ = std::max({horizon_, clock, freeOf(op.stream)});
}

void RankTimeline::summarise(SimResult* r) const {
  // The kernels in order of start, sorted once: each union below reads them
  // in that order (sorting each list apart was 9% of predicting a 100k-op
  // step).
  std::vector<Interval> iv = intervals_;
  std::sort(iv.begin(), iv.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<std::pair<double, double>> all, comm, compute;
  all.reserve(iv.size());
  for (const Interval& i : iv) {
    all.push_back({i.start, i.end});
    (i.comm ? comm : compute).push_back({i.start, i.end});
  }
  std::vector<std::pair<double, double>> waits = waits_;
  std::sort(waits.begin(), waits.end());
  const double iteration = r->iteration_us;
  r->device_active_us = core::unionLengthOfSorted(all);
  r->device_idle_us = std::max(0.0, iteration - r->device_active_us);
  r->compute_us = core::unionLengthOfSorted(compute);
  r->comm_us = core::unionLengthOfSorted(comm);
  r->wait_us = core::unionLengthOfSorted(waits);
  // Exposed communication: comm time (transfer and the wait for the group)
  // not hidden under compute, i.e. |comm U wait U compute| - |compute|.
  std::vector<std::pair<double, double>> busy(all.size() + waits.size());
  std::merge(all.begin(), all.end(), waits.begin(), waits.end(), busy.begin(),
             [](const auto& a, const auto& b) { return a.first < b.first; });
  r->exposed_comm_us = std::max(0.0, core::unionLengthOfSorted(busy) - r->compute_us);
  // CPU-bound: device gaps that end with a kernel waiting for its launch (or
  // for a stream that was itself launch-limited), plus the tail after the
  // last kernel while the CPU finishes. Gaps that end on a rank arrival are
  // waiting for other ranks, not for this CPU.
  double covered_to = start_us_;
  for (const Interval& i : iv) {
    if (i.start > covered_to && i.reason != SimWait::kRanks)
      r->cpu_bound_us += i.start - covered_to;
    covered_to = std::max(covered_to, i.end);
  }
  r->cpu_bound_us += std::max(0.0, start_us_ + iteration - covered_to);
}

SimResult RankTimeline::finish() {
  r_.iteration_us = horizon_ - start_us_;
  summarise(&r_);
  return std::move(r_);
}

SimResult simulate(const std::vector<SimOp>& ops, bool keep_schedule) {
  RankTimeline timeline(ops, 0, keep_schedule);
  while (!timeline.done()) timeline.advance();
  return timeline.finish();
}

}  // namespace tracetwin::predictors
