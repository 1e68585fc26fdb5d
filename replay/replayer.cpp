// replayGraph: plan once, materialise inputs, then warm-up and measured
// iterations of every selected op through the dispatcher.
#include "replay/replayer.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>  // set_num_threads
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "core/autocast.h"
#include "core/compiled_regions.h"
#include "core/errors.h"
#include "core/statistics.h"
#include "replay/comm/comm_replayer.h"
#include "replay/compiled/compiled_kernels.h"
#include "replay/cpu_time.h"
#include "replay/device/device_timer.h"
#include "replay/device/kernel_collector.h"
#include "replay/op_libraries.h"
#include "replay/output_check.h"
#include "replay/page_faults.h"
#include "replay/replay_measurements.h"
#include "replay/replay_plan.h"
#include "replay/replay_setup.h"
#include "replay/result_json.h"
#include "replay/slot_table.h"
#include "replay/standins.h"
#include "replay/stream_plan.h"
#include "replay/stream_switcher.h"
#include "replay/trace_meta.h"
#include "replay/zipf_indices.h"

namespace tracetwin::replay {
namespace {

using Clock = std::chrono::steady_clock;

using core::median;

// The ops in replay order, for --host-time (replay/host_time.h).
std::vector<HostTimePlanner::Op> hostTimeOps(const ReplayPlan& plan) {
  std::vector<HostTimePlanner::Op> ops;
  ops.reserve(plan.ops.size());
  for (const PreparedOp& op : plan.ops)
    ops.push_back({op.id, op.name, std::nullopt, op.family == "comm"});
  return ops;
}

class IterationRunner {
 public:
  IterationRunner(ReplayPlan& plan, SlotTable& slots, const ReplayOptions& options,
                  ReplayResult& result, bool cuda, StreamSwitcher* streams,
                  comm::CommReplayer* async_comm, std::vector<StandIn> standins,
                  compiled::KernelDevice* waiter)
      : plan_(plan),
        slots_(slots),
        options_(options),
        result_(result),
        failed_(plan.ops.size()),
        cuda_(cuda),
        streams_(streams),
        comm_(async_comm),
        standins_(std::move(standins)),
        waiter_(waiter) {
    const size_t n = plan.ops.size();
    // Sample storage for every measured iteration is reserved here: growing it
    // inside a timed iteration moved the heap (embbag: the third measured
    // iteration of every run 5.4-6.8 ms against 3.0-3.8, with page faults).
    const auto iters = size_t(std::max(options.measured_iters, 0));
    m_.cpu_us.resize(n);
    m_.device_us.resize(n);
    m_.gap_us.resize(n);
    for (size_t i = 0; i < n; ++i) {
      m_.cpu_us[i].reserve(iters);
      m_.device_us[i].reserve(iters);
      m_.gap_us[i].reserve(iters);
    }
    host_.emplace(hostTimeOps(plan), HostTimeSettings{options.host_time_mode, options.host_targets,
                                                      options.host_scale, options.warmup_iters},
                  &result.host_time);
    m_.iterations_ms.reserve(iters);
    m_.outside_ops_ms.reserve(iters);
    m_.host_loop_ms.reserve(iters);
    for (auto* per_iteration :
         {&m_.busy_ms, &m_.span_ms, &m_.attributed_share, &m_.records, &m_.unattributed}) {
      per_iteration->reserve(iters);
    }
    m_.kernels.assign(n, 0);
    m_.start_us.assign(n, 0);
    const int index = cuda ? device::cudaIndexFromDevice(options.device) : -1;
    if (options.make_timer) {
      timer_ = options.make_timer();
    } else {
      timer_ = cuda ? device::makeCudaEventTimer(index) : device::makeSteadyClockTimer();
    }
    if (options.make_collector) {
      collector_ = options.make_collector();
    } else if (cuda && options.use_cupti) {
      collector_ = device::makeCuptiCollector(index);
    }
  }

  // Returns false when stopped (Ctrl-C) before the iteration finished.
  // `refill`: start from the upfront values again (see refillUpfront), or
  // from new indices only (fresh_indices); on CUDA the refill kernels
  // precede the timer's start event on the stream.
  bool run(int iteration, bool measured, bool refill) {
    host_->beginIteration(iteration);  // plans the waits once the warm-up is over
    if (iteration > 0 && refill) slots_.refillBefore(uint64_t(iteration), options_.fresh_indices);
    slots_.setTracking(iteration == 0);
    if (collector_) collector_->beginIteration();
    // Ranks start each iteration together (the barrier is not timed) and
    // stop together: a Ctrl-C is agreed there, never mid-iteration, where
    // the peers would wait in this rank's collectives until they time out.
    const bool stop = options_.should_stop && options_.should_stop();
    if (options_.rank_session && options_.rank_session->beginIteration(stop)) return false;
    timer_->start();
    if (streams_) streams_->beginIteration();
    const auto iteration_start = Clock::now();
    host_->startClock(iteration_start);  // --host-time: the deadlines' first base
    double ops_us = 0;  // this iteration's timed calls
    auto previous_end = iteration_start;  // the last call's end
    bool complete = true;
    for (PreparedOp& op : plan_.ops) {
      if (!options_.rank_session && options_.should_stop && options_.should_stop()) {
        complete = false;
        break;
      }
      if (!op.runnable()) {
        // A stand-in is the op's time, not time outside the ops.
        ops_us += standIn(op);
        continue;
      }
      // An op that failed is not called again: its throw (c10::Error builds
      // its message, with a backtrace) is no work the original did, and the
      // report counts it failed, not replayed. Collectives are always called
      // (their peers wait for them).
      if (failed_[size_t(op.index)] && !op.special) {
        for (int32_t s : op.release_after) slots_.release(s);
        continue;
      }
      // Python numbers the original wrapped into tensors before the call
      // (outside the op's own span there too).
      for (int32_t s : op.transient_inputs) slots_.createTransient(s);
      if (streams_) streams_->beforeOp(op.index, slots_);
      // --host-time: the original's host time before the call, then what
      // waits for other ranks (host_time.h: left to the real collectives).
      host_->beforeCall(size_t(op.index));
      const bool awaited = comm_ && comm_->hasPending() && awaitCollectivesOf(op);
      const auto t0 = Clock::now();
      callTimed(op);
      const auto t1 = Clock::now();
      host_->afterCall(size_t(op.index), toUs(t0 - iteration_start), toUs(t1 - iteration_start),
                       awaited);
      if (check_outputs_ && !failed_[size_t(op.index)]) checkOutputs(op);
      if (streams_) streams_->afterOp(op.index);
      op.stack.clear();  // keeps its capacity; the results live on in their slots
      for (int32_t s : op.release_after) slots_.release(s);
      const double op_us = std::chrono::duration<double, std::micro>(t1 - t0).count();
      ops_us += op_us;
      if (measured) {
        m_.cpu_us[size_t(op.index)].push_back(op_us);
        m_.gap_us[size_t(op.index)].push_back(toUs(t0 - previous_end));
        m_.start_us[size_t(op.index)] =
            std::chrono::duration<double, std::micro>(t0 - iteration_start).count();
      }
      previous_end = t1;
    }
    if (streams_) streams_->endIteration();
    if (comm_) comm_->waitAll();  // an iteration ends with its collectives done
    check_outputs_ = false;  // the first iteration's results, once
    const double loop_ms =
        std::chrono::duration<double, std::milli>(Clock::now() - iteration_start).count();
    const double ms = timer_->stopMs();
    if (options_.rank_session) options_.rank_session->endIteration(measured && complete, ms);
    if (collector_) collectKernels(measured);
    slots_.releaseProduced();
    slots_.setTracking(false);
    if (measured && complete) {
      m_.iterations_ms.push_back(ms);
      m_.host_loop_ms.push_back(loop_ms);
      // On CUDA the timer measures the device; the host's own time outside
      // the ops is the loop's.
      m_.outside_ops_ms.push_back((cuda_ ? loop_ms : ms) - ops_us / 1000.0);
    }
    return complete;
  }

  Measurements& measurements() { return m_; }
  const std::vector<bool>& failed() const { return failed_; }
  HostTimeLoop& hostTime() { return *host_; }

 private:
  static double toUs(Clock::duration d) {
    return std::chrono::duration<double, std::micro>(d).count();
  }

  // An op that reads or writes what an asynchronous collective still works on
  // waits for it first, as the original did (DDP waits for its all-reduces
  // before the optimizer reads the gradients). Outside the op's timed call:
  // in the original the wait was no op either.
  // Whether it waited for one.
  bool awaitCollectivesOf(const PreparedOp& op) {
    touched_.clear();
    for (const TensorArg& arg : op.args.tensors) {
      for (int32_t s : arg.slots) {
        if (s >= 0) touched_.push_back(slots_.peek(s));
      }
    }
    return comm_->waitForTensors(touched_) > 0;
  }

  // A busy wait, not a sleep: a sleeping thread gives its core away and
  // wakes late by tens of microseconds, which would skew short stand-ins.
  static void busyWait(double us) {
    if (us <= 0) return;
    const auto until = Clock::now() + std::chrono::duration<double, std::micro>(us);
    while (Clock::now() < until) {
    }
  }

  // Stands in for an op that cannot run; returns the host time it took. A
  // compiled kernel's time keeps its stream busy on the device, on the
  // stream it ran on, while the host spends the launch's recorded CPU time;
  // with no device to wait on (a CPU replay) the kernel's time is the op's
  // work, spent on the host.
  double standIn(const PreparedOp& op) {
    const StandIn& s = standins_[size_t(op.index)];
    if (s.device_us > 0 && waiter_ != nullptr) {
      if (streams_) streams_->beforeOp(op.index, slots_);
      busyWait(s.host_us);
      waiter_->waitUs(s.device_us);
      if (streams_) streams_->afterOp(op.index);
      return s.host_us;
    }
    const double us = s.device_us > 0 ? s.device_us : s.host_us;
    busyWait(us);
    return us;
  }

  void callTimed(PreparedOp& op) {
    try {
      if (collector_) {
        device::ScopedOp scope(*collector_, uint64_t(op.index));
        callPreparedOp(op, slots_);
      } else {
        callPreparedOp(op, slots_);
      }
    } catch (const c10::Error& e) {
      onFailure(op, e.what_without_backtrace());
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      onFailure(op, e.what());
    }
  }

  void checkOutputs(const PreparedOp& op) {
    std::string mismatch = outputMismatch(op, plan_.tensors, slots_);
    if (!mismatch.empty()) result_.mismatched.push_back({op.id, op.name, std::move(mismatch)});
  }

  void onFailure(const PreparedOp& op, const std::string& message) {
    int64_t bytes = -1;
    if (isOutOfMemory(message, &bytes)) {
      throw RuntimeFailure(fmt::format("out of memory in op {} ({}){}: {}", op.id, op.name,
                                       bytes > 0 ? fmt::format(": asked for {} bytes", bytes) : "",
                                       message));
    }
    if (options_.strict) {
      throw RuntimeFailure(
          fmt::format("op {} ({}) failed (--strict): {}", op.id, op.name, message));
    }
    if (!failed_[size_t(op.index)]) {
      failed_[size_t(op.index)] = true;
      result_.failed.push_back({op.id, op.name, message});
    }
  }

  void collectKernels(bool measured) {
    auto kernels = collector_->endIteration();
    if (measured) addIterationKernels(plan_, kernels, collector_->droppedRecords(), m_);
  }

  ReplayPlan& plan_;
  SlotTable& slots_;
  const ReplayOptions& options_;
  ReplayResult& result_;
  std::vector<bool> failed_;
  bool cuda_;                           // iteration timed by device events
  StreamSwitcher* streams_;             // null: every op on the current stream
  bool check_outputs_ = true;           // until the first iteration has run
  Measurements m_;
  std::unique_ptr<device::DeviceTimer> timer_;
  std::unique_ptr<device::KernelCollector> collector_;
  comm::CommReplayer* comm_;         // null: collectives complete where issued
  std::vector<at::Tensor> touched_;  // reused by awaitCollectivesOf
  std::vector<StandIn> standins_;    // per op index; zeros: nothing stands in
  compiled::KernelDevice* waiter_;   // device-side stand-ins; null: on the host
  std::optional<HostTimeLoop> host_;  // --host-time (replay/host_time.h)
};

}  // namespace

bool replayAvailable() { return true; }

ReplayResult replayGraph(const core::Graph& graph, const ReplayOptions& options) {
  checkOptions(options);
  loadOpLibraries(options.op_libraries);
  const DeviceMap devices = deviceMapFor(options.device, graph);
  if (int threads = chooseThreads(options, graph); threads > 0) at::set_num_threads(threads);
  at::NoGradGuard no_grad;  // backward ops are in the trace; autograd must not record again

  ReplayResult result;
  result.device = devices.target.str();
  result.threads = at::get_num_threads();
  const core::Selection selection = core::selectTopLevelOps(graph);
  // An op with autocast's casts deeper inside replays as its children
  // (core/autocast.h); coverage counts what is replayed.
  std::vector<core::NodeId> expanded;
  const std::vector<core::NodeId> ops = core::expandNestedAutocast(graph, selection.ops, &expanded);
  for (core::NodeId id : expanded) {
    result.substitutions.push_back(
        {id, graph.node(id).name, "its children (autocast's casts sit inside it)"});
  }
  result.selected_ops = int64_t(ops.size());

  SpecialOpContext context;
  context.device = result.device;
  if (options.rank_session) {
    options.rank_session->prepare(graph, selection.ops);
    context.distributed_comm = &options.rank_session->commReplayer();
  }
  // Outlives the plan: its ops launch compiled kernels on its device.
  compiled::CompiledKernels kernels(openInductorCache(options),
                                    kernelDeviceFactory(options, devices));
  if (selection.triton_ops > 0) context.compiled = &kernels;
  ReplayPlan plan = buildReplayPlan(graph, ops, devices, context);
  result.skipped = plan.skipped;
  result.substitutions.insert(result.substitutions.end(), plan.substitutions.begin(),
                              plan.substitutions.end());
  result.overload_mappings = plan.overload_mappings;
  result.trace_peak_bytes = plan.trace_peak_bytes;
  if (options.strict && !plan.skipped.empty()) {
    const OpIssue& first = plan.skipped.front();
    throw RuntimeFailure(fmt::format("{} of {} ops cannot replay (--strict); first: op {} ({}): {}",
                                     plan.skipped.size(), result.selected_ops, first.id, first.name,
                                     first.reason));
  }
  StandInPlan standins = planStandIns(plannedOps(graph, plan), options,
                                      core::summarizeCompiled(graph, selection));
  result.placeholders = standins.placeholders;
  result.compiled = standins.compiled;
  compiled::KernelDevice* waiter = nullptr;
  if (selection.triton_ops > 0) {
    waiter = kernels.device();
    result.compiled.waits_on =
        waiter ? waiter->describe() : "host (busy wait): " + kernels.deviceError();
  }

  if (options.plan_only) {
    for (const PreparedOp& op : plan.ops) result.replayed_ops += op.runnable() ? 1 : 0;
    result.coverage =
        result.selected_ops ? double(result.replayed_ops) / double(result.selected_ops) : 0.0;
    return result;
  }
  SlotTable slots(plan.tensors, devices);
  slots.setIndexDistributions(options.index_zipf);
  slots.materialiseUpfront(plan.nodes, options.seed);
  result.zipf_lookups = checkIndexDistributions(options.index_zipf, slots.zipfApplied());
  const StreamPlan stream_plan = streamPlanFor(plan, options);
  std::optional<StreamSwitcher> switcher;
  if (stream_plan.multiStream()) {
    result.streams.recorded = stream_plan.recorded;
    result.streams.cross_stream_waits = stream_plan.cross_stream_waits;
    if (devices.target.is_cpu()) {
      result.streams.note = "a CPU replay runs every op on the calling thread: one stream";
    } else {
      switcher.emplace(stream_plan, devices.target);
      result.streams.applied = true;
    }
  }
  IterationRunner runner(plan, slots, options, result, !devices.target.is_cpu(),
                         switcher ? &*switcher : nullptr, context.distributed_comm,
                         std::move(standins.per_op), waiter);
  const int total = options.warmup_iters + options.measured_iters;
  result.page_faults.reserve(size_t(std::max(options.measured_iters, 0)));
  result.iterations_cpu_ms.reserve(size_t(std::max(options.measured_iters, 0)));
  for (int it = 0; it < total; ++it) {
    const bool measured = it >= options.warmup_iters;
    // A measured iteration follows a refill and settle_iters untimed ones
    // (see ReplayOptions::settle_iters); a warm-up one follows a refill.
    bool complete = true;
    // Warm-up iterations measured for --host-time have the measured ones' shape.
    const bool host_sample = runner.hostTime().samples(it);
    const int settle = measured || host_sample ? options.settle_iters : 0;
    for (int s = 0; s < settle && complete; ++s) complete = runner.run(it, false, s == 0);
    if (!complete) {
      result.interrupted = true;
      break;
    }
    runner.hostTime().setSampling(host_sample);
    const int64_t faults_before = minorPageFaults();
    const double cpu_before = processCpuMs();
    complete = runner.run(it, measured, settle == 0);
    runner.hostTime().setSampling(false);
    const double cpu_after = processCpuMs();
    const int64_t faults_after = minorPageFaults();
    if (measured && complete && cpu_before >= 0 && cpu_after >= 0) {
      result.iterations_cpu_ms.push_back(cpu_after - cpu_before);
    }
    if (measured && complete && faults_before >= 0 && faults_after >= 0) {
      result.page_faults.push_back(faults_after - faults_before);
    }
    if (!complete) {
      result.interrupted = true;
      break;
    }
  }
  fillResult(
      plan, runner.measurements(), runner.failed(),
      [&runner](size_t i) { return runner.hostTime().waitUs(i); }, result);
  result.iteration_cpu_ms_median = median(result.iterations_cpu_ms);
  // Interrupted too: every rank stopped before the same iteration (beginIteration).
  if (options.rank_session) result.distributed = options.rank_session->finish();
  result.peak_memory_bytes = slots.peakBytes();
  if (!options.chrome_trace_path.empty()) writeChromeTrace(options.chrome_trace_path, result);
  return result;
}

}  // namespace tracetwin::replay
