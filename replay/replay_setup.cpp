// What a replay sets up before its first iteration (replay/replay_setup.h).
#include "replay/replay_setup.h"

#include <ATen/ATen.h>
#include <fmt/core.h>

#include "core/errors.h"
#include "replay/device/device_timer.h"
#include "replay/host_time.h"
#include "replay/trace_meta.h"

namespace tracetwin::replay {

namespace {

bool traceHasCuda(const core::Graph& graph) {
  for (const auto& t : graph.tensors()) {
    if (t.device.rfind("cuda", 0) == 0) return true;
  }
  return false;
}

}  // namespace

DeviceMap deviceMapFor(const std::string& device, const core::Graph& graph) {
  DeviceMap map;
  map.trace_has_cuda = traceHasCuda(graph);
  if (device == "cpu") return map;
  const int index = device::cudaIndexFromDevice(device);
  if (index < 0) {
    throw UsageError(fmt::format("--device '{}': expected cpu, cuda or cuda:N", device));
  }
  device::requireCudaDevice(index);  // "no CUDA device: ..." (UnavailableError)
  if (!at::hasCUDA()) {
    throw UnavailableError(fmt::format(
        "--device {}: this LibTorch was built without CUDA; install a CUDA LibTorch", device));
  }
  map.target = c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
  return map;
}

int chooseThreads(const ReplayOptions& options, const core::Graph& graph) {
  if (options.threads > 0) return options.threads;
  if (auto meta = readTraceMeta(graph.source_path); meta && meta->threads > 0) return meta->threads;
  return 0;  // LibTorch default
}

// Per-op samples across measured iterations, plus the last iteration's layout.
// The recorded streams as a plan over this replay's ops and slots.
StreamPlan streamPlanFor(const ReplayPlan& plan, const ReplayOptions& options) {
  if (options.recorded_streams.empty()) return {};
  std::vector<int64_t> recorded(plan.ops.size(), kNoRecordedStream);
  std::vector<std::vector<int32_t>> inputs(plan.ops.size());
  for (const PreparedOp& op : plan.ops) {
    const auto i = size_t(op.index);
    if (auto it = options.recorded_streams.find(op.id); it != options.recorded_streams.end())
      recorded[i] = it->second;
    for (const TensorArg& arg : op.args.tensors)
      inputs[i].insert(inputs[i].end(), arg.slots.begin(), arg.slots.end());
    for (const PreparedOp& cast : op.casts) {
      for (const TensorArg& arg : cast.args.tensors)
        inputs[i].insert(inputs[i].end(), arg.slots.begin(), arg.slots.end());
    }
  }
  std::vector<int64_t> def_op;
  for (const SlotInfo& slot : plan.tensors.slots()) def_op.push_back(slot.def_op);
  return planStreams(recorded, inputs, def_op);
}

std::shared_ptr<const compiled::InductorCache> openInductorCache(const ReplayOptions& options) {
  if (options.inductor_cache.empty()) return nullptr;
  return std::make_shared<const compiled::InductorCache>(
      compiled::InductorCache::open(options.inductor_cache));
}

// Compiled kernels launch, and their stand-ins wait, on the CUDA device the
// replay runs on; a CPU replay has none (stand-ins then wait on the host).
compiled::KernelDeviceFactory kernelDeviceFactory(const ReplayOptions& options,
                                                  const DeviceMap& devices) {
  if (options.make_kernel_device) return options.make_kernel_device;
  if (devices.target.is_cpu()) {
    return []() -> std::unique_ptr<compiled::KernelDevice> {
      throw UnavailableError("compiled kernels run on a CUDA device; this replay is on the CPU");
    };
  }
  const int index = devices.target.index();
  return [index] { return compiled::makeCudaKernelDevice(index); };
}

std::vector<PlannedOp> plannedOps(const core::Graph& graph, const ReplayPlan& plan) {
  std::vector<PlannedOp> out;
  out.reserve(plan.ops.size());
  for (const PreparedOp& op : plan.ops) {
    out.push_back({op.id, op.name, op.runnable(),
                   graph.node(op.id).category == core::NodeCategory::kTriton});
  }
  return out;
}

void checkOptions(const ReplayOptions& options) {
  if (options.warmup_iters < 0 || options.measured_iters < 1 || options.threads < 0 ||
      options.settle_iters < 0) {
    throw UsageError(fmt::format(
        "replay options: need warmup >= 0, iters >= 1, threads >= 0, settle >= 0 "
        "(got {}, {}, {}, {})",
        options.warmup_iters, options.measured_iters, options.threads, options.settle_iters));
  }
  checkHostTimeSettings({options.host_time_mode, options.host_targets, options.host_scale,
                         options.warmup_iters});
}

}  // namespace tracetwin::replay
