#include "calibration/host_probe.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>

#include "calibration/bandwidth_probe.h"
#include "calibration/cold_write_probe.h"
#include "calibration/graph_builder.h"
#include "calibration/page_fault_probe.h"
#include "calibration/reuse_probe.h"
#include "core/errors.h"
#include "replay/device/device_timer.h"
#include "replay/replayer.h"
#include "core/aten_schemas.h"

namespace tracetwin::calibration {
namespace {

// Median time of one op of the single-op (or repeated-op) graph.
double replayOpUs(const core::Graph& graph, const ProbeOptions& o, int iters) {
  replay::ReplayOptions ro;
  ro.device = o.device;
  ro.threads = o.threads;
  ro.warmup_iters = 1;
  ro.measured_iters = iters;
  ro.settle_iters = 0;  // a peak-rate probe: nothing to settle
  ro.strict = true;
  replay::ReplayResult r = replay::replayGraph(graph, ro);
  std::vector<double> us;
  for (const auto& m : r.per_op) us.push_back(o.device == "cpu" ? m.cpu_us : m.device_us);
  if (us.empty())
    throw RuntimeFailure(fmt::format("device probe {}: no op was measured", graph.source_path));
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

double measureCopyBandwidth(const ProbeOptions& o) {
  const int64_t numel = o.copy_bytes / 4;
  GraphBuilder b(o.device);
  auto dst = b.tensor({numel});
  b.op("aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
       {dst, b.tensor({numel}), GraphBuilder::boolValue(false)}, {dst});
  const double us = replayOpUs(b.build("device probe copy_"), o, 5);
  return 2.0 * static_cast<double>(o.copy_bytes) / (us * 1e-6);  // read + write
}

// The replay loop's own per-op cost: 200 in-place adds of a 0-dim long
// tensor into distinct one-element floats (the shape of data/adds5k), each
// float freed after its op as replay frees every tensor after its last use;
// iteration time minus the ops' own times, per op. Views of one tensor
// would free nothing and miss the ~1 us a free costs (0.05 vs ~1.4 us/op).
double measureReplayLoopUs(const ProbeOptions& o) {
  constexpr int kOps = 200;
  GraphBuilder b(o.device);
  auto one = b.tensor({}, core::DType::kInt64);
  for (int i = 0; i < kOps; ++i) {
    auto x = b.tensor({1});
    b.op("aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
         {x, one, GraphBuilder::intValue(1)}, {x});
  }
  replay::ReplayOptions ro;
  ro.device = o.device;
  ro.threads = o.threads;
  ro.warmup_iters = 2;
  ro.measured_iters = 10;
  ro.settle_iters = 0;  // a peak-rate probe: nothing to settle
  replay::ReplayResult r = replay::replayGraph(b.build("device probe replay loop"), ro);
  double op_sum = 0;
  for (const auto& m : r.per_op) op_sum += m.cpu_us;
  if (r.per_op.empty()) return 0;
  return std::max(0.0,
                  (r.iteration_ms_median * 1000.0 - op_sum) / static_cast<double>(r.per_op.size()));
}

}  // namespace

double probeMmFlops(const ProbeOptions& o, core::DType dt, int64_t n) {
  GraphBuilder b(o.device);
  b.op(core::schemas::kMm, {b.tensor({n, n}, dt), b.tensor({n, n}, dt)},
       {b.tensor({n, n}, dt)});
  const double us = replayOpUs(b.build(fmt::format("device probe mm {}", n)), o, 3);
  return 2.0 * n * n * n / (us * 1e-6);
}

predictors::DeviceSpec probePeakRates(const ProbeOptions& o) {
  predictors::DeviceSpec spec;
  // The first replay is the device check: "cuda" on a host without a GPU
  // throws UnavailableError here, before anything else is measured.
  spec.peak_flops["float32"] = probeMmFlops(o, core::DType::kFloat32, o.mm_size);
  spec.peak_flops["float64"] = probeMmFlops(o, core::DType::kFloat64, o.mm_size * 3 / 4);
  spec.memory_bandwidth = measureCopyBandwidth(o);
  return spec;
}

ProbeResult probeDevice(const ProbeOptions& o) {
  ProbeResult out;
  out.spec = probePeakRates(o);
  predictors::DeviceSpec& spec = out.spec;
  const bool cpu = o.device == "cpu";
  out.replay_loop_us = cpu ? measureReplayLoopUs(o) : 0.0;
  spec.kind = cpu ? predictors::DeviceKind::kCpu : predictors::DeviceKind::kGpu;
  const HostFacts facts = readHostFacts();
  spec.name = cpu ? "host-cpu" : o.device;
  spec.memory_bytes = facts.memory_bytes > 0 ? facts.memory_bytes : int64_t{1} << 30;
  spec.compute_units = std::max<int64_t>(1, cpu ? facts.logical_cpus : 1);
  spec.clock_hz = facts.clock_hz > 0 ? facts.clock_hz : 1e9;
  if (cpu) spec.caches = facts.caches;
  std::string gpu_source;
  if (!cpu) {
    // The GPU's own SMs, clock, memory and L2: these specs once carried one
    // compute unit and the host CPU's clock, and scaling an H200 calibration
    // to the H100 datasheet took 1/132 of its SMs (mlp_big 1.2 ms against
    // 18.6 replayed on an H100).
    const replay::device::CudaDeviceFacts gpu =
        replay::device::cudaDeviceFacts(std::max(0, replay::device::cudaIndexFromDevice(o.device)));
    spec.compute_units = std::max(1, gpu.multiprocessors);
    if (gpu.clock_hz > 0) spec.clock_hz = gpu.clock_hz;
    if (gpu.memory_bytes > 0) spec.memory_bytes = gpu.memory_bytes;
    // The L2 goes in the sources only: in `caches` it would turn on the
    // cold-input walk and the bandwidth fit's past-L2 extrapolation for this
    // GPU's models, which no GPU calibration has been checked with.
    gpu_source = fmt::format("; {}: {} SMs, {:.0f} MHz, {} MiB, L2 {} KiB from the CUDA runtime",
                             gpu.name, gpu.multiprocessors, gpu.clock_hz / 1e6,
                             gpu.memory_bytes >> 20, gpu.l2_bytes >> 10);
  }
  if (cpu) {
    const PageCosts pages = measurePageCosts();
    spec.page_fault_us = pages.fault_us;
    spec.page_unmap_us = pages.unmap_us;
    ColdWriteProbeOptions cold;
    cold.flush_bytes = std::max(cold.flush_bytes, 4 * spec.lastLevelCacheBytes());
    spec.cold_write_us_per_mib = measureColdWriteUsPerMiB(cold);
    if (const ReuseProbe reuse = measureReuseCapacity(); reuse.capacity_bytes > 0)
      spec.reuse_cache_bytes = reuse.capacity_bytes;
    // Two streams need two cores: on one, they would time-slice, not contend.
    if (facts.logical_cpus >= 2) spec.memory_contention = measureMemoryContention().contention;
  }
  spec.sources.push_back(fmt::format(
      "measured by tracetwin calibrate: {} ({} logical CPUs), replays with {} intra-op thread(s); "
      "peak FLOP/s from a {}^3 mm, bandwidth from a {} MiB copy_{}",
      facts.cpu_model.empty() ? "unknown CPU" : facts.cpu_model, facts.logical_cpus, o.threads,
      o.mm_size, o.copy_bytes >> 20,
      cpu ? ", page faults and unmaps from writing fresh and mapped 64 MiB (page_fault_probe.h), "
            "cold writes from 8 MiB written after a stream and again (cold_write_probe.h), "
            "reuse capacity from a 4 MiB read after growing traffic (reuse_probe.h), memory "
            "contention from a 128 MiB copy alone and on two cores at once (bandwidth_probe.h)"
          : gpu_source));
  return out;
}

}  // namespace tracetwin::calibration
