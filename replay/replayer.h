// Public, LibTorch-free interface of the replay layer: the CLI, calibration
// and tests include only this. When tracetwin is built without LibTorch,
// replayGraph() throws UnavailableError (replay/replayer_unavailable.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/graph.h"
#include "core/index_law.h"
#include "replay/dist/rank_session.h"
#include "replay/host_time.h"

namespace tracetwin::replay {

namespace device {
class DeviceTimer;      // replay/device/device_timer.h
class KernelCollector;  // replay/device/kernel_collector.h
}  // namespace device
namespace compiled {
class KernelDevice;  // replay/compiled/kernel_device.h
}  // namespace compiled

struct ReplayOptions {
  std::string device = "cpu";  // "cpu", "cuda", "cuda:N"
  // Shared libraries that register operators (replay/op_libraries.h),
  // loaded before the ops are resolved.
  std::vector<std::string> op_libraries;
  int warmup_iters = 2;
  int measured_iters = 5;
  // Untimed iterations between the refill of the upfront values and each
  // measured iteration. Back-to-back steps of the original each start from
  // the cache state the previous step left; right after a refill has
  // rewritten the weights, gradients and tables, a step ran 10-25% slower
  // (the bundled DLRM-like trace: 3.8-4.2 ms against 3.3-3.6 with one settle
  // iteration and 3.0-3.3 for its eager steps). One settle iteration moves the
  // weights one replayed optimizer step from the refilled values, which the
  // value generators keep sane (value_generators.h).
  int settle_iters = 1;
  // Before each iteration after the first, refill only the integer upfront
  // inputs (embedding indices, offsets), drawn anew (seed + iteration), and
  // leave the floating ones (tables, weights) as the previous iteration left
  // them. A calibration unit's lookup then finds the table as a step with a
  // new batch does: a Zipf table's hot rows still cached, a uniform table's
  // rows mostly not (calibration/replay_unit.cpp). Nothing settles the
  // values: for graphs that do not update their floating inputs in place.
  bool fresh_indices = false;
  int threads = 0;                // intra-op threads; 0 = meta file's count, else LibTorch default
  bool strict = false;            // any skip or failure is an error
  bool use_cupti = true;          // CUDA only: kernel records via CUPTI
  uint64_t seed = 1234;           // random data for floating-point tensors
  std::string chrome_trace_path;  // write one replayed iteration when set
  // Resolve, substitute and convert every op but run none (fast checks of
  // large traces): replayed_ops then counts the ops that would be called,
  // and there are no timings or replay memory figures.
  bool plan_only = false;
  // Called between ops; returning true stops the replay after the current op
  // (Ctrl-C). The partial result is still returned, with interrupted = true.
  std::function<bool()> should_stop;
  // Seam for the device path: when set, these make the iteration timer and
  // the kernel collector instead of the device's own (steady clock or CUDA
  // events; CUPTI), so the CUDA wiring is tested with fakes on a CPU host.
  std::function<std::unique_ptr<device::DeviceTimer>()> make_timer;
  std::function<std::unique_ptr<device::KernelCollector>()> make_collector;
  // Recorded CPU durations (us) by op id, from a linked Kineto trace. An op
  // that cannot be replayed (unregistered custom op, Triton kernel without its
  // source, multi-rank collective) and has an entry here is stood in for by a
  // busy wait of that length, so the replayed iteration keeps the original's
  // shape. It still counts as skipped: coverage stays honest.
  std::unordered_map<core::NodeId, double> placeholder_us;
  // Recorded stream of each op's first kernel by op id, from a linked Kineto
  // trace. When ops ran on more than one stream, a CUDA replay runs them on
  // as many streams, joined by events where one reads another's results
  // (replay/stream_plan.h). Empty: every op on the current stream.
  std::unordered_map<core::NodeId, int64_t> recorded_streams;
  // One rank of a distributed replay (replay/dist/rank_session.h): its
  // groups run the collectives, a barrier precedes each iteration, and the
  // collectives' times are exchanged after the measured window. Null: a
  // single-process replay.
  std::shared_ptr<dist::RankSession> rank_session;
  // Host time of the original around each op, by op id: "recorded" from a
  // linked Kineto trace, "model" from the CPU-overhead model (the CLI fills
  // both; replay/host_time.h). Each op with a target waits before its call
  // for what the original spent beyond the replay's own time, measured in
  // the warm-up (iterations 1.. when there are several), times host_scale.
  // "replayed" (the default): the ops' own calls only.
  std::string host_time_mode = "replayed";
  std::unordered_map<core::NodeId, HostTarget> host_targets;
  double host_scale = 1.0;  // 0.5: the original's host twice as fast
  // torch.compile steps (docs/replay.md, "Compiled steps"): the Triton
  // kernels of compiled regions replay, in this order of preference,
  //  1. launched from Inductor's cache of the original run, this directory
  //     (counted as replayed);
  //  2. else stood in for by a device-side wait of the kernel time the
  //     original's Kineto trace recorded, by op id;
  //  3. else by a wait of the time the kernel model predicts, by op id,
  //     reported as predicted, not measured.
  // Stand-ins count as not replayed. On a CPU replay they wait on the host.
  std::string inductor_cache;
  std::unordered_map<core::NodeId, double> recorded_device_us;
  std::unordered_map<core::NodeId, double> predicted_device_us;
  // Seam: the device compiled kernels launch on and stand-ins wait on
  // (default: the CUDA driver on a CUDA replay, none on a CPU one).
  std::function<std::unique_ptr<compiled::KernelDevice>()> make_kernel_device;
  // Zipf laws of embedding lookups' indices by op id, from a side file
  // (--index-distribution, predictors/specs/index_distribution_spec.h): the
  // value generators draw those indices Zipf instead of uniform
  // (replay/zipf_indices.h). A lookup here whose indices the replay does not
  // make (an earlier op of the trace computes them) is an InputError.
  std::unordered_map<core::NodeId, core::IndexLaw> index_zipf;
};

struct OpIssue {
  core::NodeId id = core::kNoNode;
  std::string name;
  std::string reason;
};

struct Placeholder {
  core::NodeId id = core::kNoNode;
  std::string name;
  double recorded_us = 0;  // the host's busy wait each iteration (the op's recorded CPU time)
  double device_us = 0;    // the device-side wait (a compiled kernel's time); 0: none
  std::string source = "recorded";  // "recorded" (Kineto) or "predicted" (device_us from a model)
};

// How the compiled regions' Triton kernels were replayed (ReplayOptions).
struct CompiledReplay {
  int64_t kernels = 0;  // selected Triton kernels (also in selected_ops)
  int64_t forward_kernels = 0;
  int64_t backward_kernels = 0;
  int64_t launched = 0;            // mode 1: from Inductor's cache; replayed
  int64_t recorded_standins = 0;   // mode 2: the Kineto trace's kernel time
  int64_t predicted_standins = 0;  // mode 3: the kernel model's time
  int64_t not_stood_in = 0;        // none of the three: skipped with no time of their own
  double recorded_standin_us = 0;  // device time stood in per iteration, mode 2
  double predicted_standin_us = 0;  // and mode 3
  std::string inductor_cache;       // the directory given; empty when none
  std::string waits_on;             // "cuda:0, CUDA driver API" or "host (busy wait): why"
  int64_t regions = 0;              // compiled-region labels in the iteration
  int64_t regions_without_kernels = 0;
  std::vector<std::string> warnings;  // kernels the trace did not record
};

struct Substitution {
  core::NodeId id = core::kNoNode;
  std::string from;  // "aten::cudnn_batch_norm"
  std::string to;    // "aten::native_batch_norm"
};

struct KernelRecord {
  std::string name;
  int64_t stream = 0;
  // Relative to the first record of the iteration: the device's clock is not
  // the host's, and the host's iteration start has no device timestamp.
  double start_us = 0;
  double duration_us = 0;
  core::NodeId op = core::kNoNode;  // the op that launched it; kNoNode when unattributed
  std::string kind = "kernel";      // "kernel", "memcpy" or "memset"
};

struct OpMeasurement {
  core::NodeId id = core::kNoNode;
  std::string name;
  std::string family;    // core::opFamily()
  double cpu_us = 0;     // median over measured iterations
  double device_us = 0;  // median sum of kernel durations (0 on CPU)
  int kernels = 0;
  double start_us = 0;  // in the last measured iteration, relative to its start
  // Median host time from the previous op's call end to this call's start
  // (the loop, frees, wrapped numbers, and the host-time wait).
  double gap_us = 0;
  double host_wait_us = 0;  // the wait planned before the call (--host-time)
  double last_cpu_us = 0;  // the call's time in that iteration (timelines)
};

// What CUPTI saw, CUDA only: medians over the measured iterations.
struct DeviceSummary {
  bool collected = false;
  double busy_ms = 0;           // union of kernel/memcpy/memset intervals ("GPU active")
  double busy_share = 0;        // busy_ms / iteration time from CUDA events
  double span_ms = 0;           // first record's start to the last one's end
  double attributed_share = 0;  // share of busy time linked to a replayed op
  int64_t records = 0;          // kernels, memcpys and memsets per iteration
  int64_t unattributed_records = 0;
  int64_t dropped_records = 0;  // lost to full CUPTI buffers, all iterations
  double kernels_per_op = 0;    // records / replayed ops
};

// How the recorded streams were used.
struct StreamUse {
  std::vector<int64_t> recorded;  // recorded stream of each replay stream; empty: one stream
  int64_t cross_stream_waits = 0;
  bool applied = false;  // false on a CPU replay, which has no streams
  std::string note;      // why not applied
};

struct ReplayResult {
  std::string device;
  std::vector<double> iterations_ms;
  double iteration_ms_median = 0;
  // Minor page faults in each measured iteration (replay/page_faults.h);
  // empty where the OS does not count them.
  std::vector<int64_t> page_faults;
  // CPU time of the process in each measured iteration (replay/cpu_time.h),
  // and its median: what the iteration cost without the time a loaded host
  // kept it waiting. Empty where the OS does not say.
  std::vector<double> iterations_cpu_ms;
  double iteration_cpu_ms_median = 0;
  // Median over measured iterations of the iteration's host time outside its
  // ops' timed calls (the loop, frees, wrapped numbers). The iteration median
  // minus the sum of per-op medians is larger on a noisy host: whole
  // iterations run slower or faster together (resnet18_b4: 0.15 ms outside
  // the ops against a 2.3 ms difference). On CUDA, where the iteration is the
  // device's, it is the host loop's time outside the calls.
  double outside_ops_ms = 0;
  // Median over measured iterations of the host's wall time from issuing the
  // first op to the last op's return. On a CPU it is the iteration; on CUDA
  // calls return once their kernels are queued, and a loop as long as the
  // iteration says the replay was bound by its host, not the device.
  double host_loop_ms = 0;
  int64_t selected_ops = 0;
  int64_t replayed_ops = 0;  // ops that ran without failure in every iteration
  double coverage = 0;       // replayed / selected
  std::vector<OpIssue> skipped;
  std::vector<OpIssue> failed;
  // Ops that ran but produced another dtype, shape or (where recorded)
  // strides than the original: checked on the first iteration
  // (replay/output_check.h). They count as replayed; the report names them.
  std::vector<OpIssue> mismatched;
  std::vector<Substitution> substitutions;
  std::vector<Placeholder> placeholders;  // skipped ops stood in for (see ReplayOptions)
  std::vector<std::string>
      overload_mappings;  // "aten::foo.new -> aten::foo.old (by argument names)"
  std::vector<OpMeasurement> per_op;
  std::vector<KernelRecord> kernels;  // last measured iteration, CUDA only
  DeviceSummary device_summary;
  int64_t peak_memory_bytes = 0;  // live replay tensors
  int64_t trace_peak_bytes = 0;   // live tensors implied by the trace
  int threads = 0;
  bool interrupted = false;
  StreamUse streams;
  std::optional<dist::DistributedSummary> distributed;  // set by a distributed replay
  HostTimeUse host_time;  // mode "replayed" unless --host-time
  // Lookups whose indices were drawn Zipf (ReplayOptions::index_zipf).
  int64_t zipf_lookups = 0;
  CompiledReplay compiled;
};

// True when this build can replay (built with LibTorch).
bool replayAvailable();

// Replays the top-level ops selected from `graph` (core::selectTopLevelOps).
// Throws UnavailableError when not built with LibTorch or when the requested
// device is absent; RuntimeFailure on strict violations or out of memory.
ReplayResult replayGraph(const core::Graph& graph, const ReplayOptions& options);

}  // namespace tracetwin::replay
