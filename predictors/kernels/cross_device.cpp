#include "predictors/kernels/cross_device.h"

#include <algorithm>
#include <cmath>

namespace tracetwin::predictors {
namespace {

// Kernels within a factor of 4 of the ridge point are bound by both roofs;
// gamma falls linearly in log2(intensity) across that band (1 at ridge/4,
// 0.5 at the ridge, 0 at 4x ridge).
constexpr double kBandLog2 = 2.0;

const LinkSpec* pickLink(const DeviceSpec& d, const std::string& name) {
  if (!name.empty()) return d.findLink(name);
  const LinkSpec* best = nullptr;
  for (const LinkSpec& l : d.links) {
    if (!best || l.bandwidth > best->bandwidth) best = &l;
  }
  return best;
}

double ratio(double a, double b) { return (a > 0 && b > 0) ? a / b : 1.0; }

}  // namespace

double habitatGamma(double flops, double bytes, core::DType dtype, const DeviceSpec& dest) {
  if (flops <= 0) return 1.0;
  if (bytes <= 0) return 0.0;
  double intensity = flops / bytes;
  double ridge = dest.ridgePoint(dtype);
  double x = std::log2(intensity / ridge);  // <0 memory side, >0 compute side
  return std::clamp(0.5 - 0.5 * x / kBandLog2, 0.0, 1.0);
}

double memoryRatio(const DeviceSpec& origin, const DeviceSpec& dest, double bytes) {
  const double dram = ratio(origin.memory_bandwidth, dest.memory_bandwidth);
  const double cache =
      static_cast<double>(std::min(origin.lastLevelCacheBytes(), dest.lastLevelCacheBytes()));
  if (cache <= 0 || bytes <= 0) return dram;
  const double on_chip =
      ratio(origin.clock_hz, dest.clock_hz) *
      ratio(static_cast<double>(origin.compute_units), static_cast<double>(dest.compute_units));
  const double in_cache = std::min(bytes, cache);
  return (in_cache * on_chip + (bytes - in_cache) * dram) / bytes;
}

double habitatScale(double origin_us, double gamma, const DeviceSpec& origin,
                    const DeviceSpec& dest, double bytes) {
  double g = std::clamp(gamma, 0.0, 1.0);
  double bw = std::pow(memoryRatio(origin, dest, bytes), g);
  double clk = std::pow(ratio(origin.clock_hz, dest.clock_hz), 1.0 - g);
  double sm = std::pow(
      ratio(static_cast<double>(origin.compute_units), static_cast<double>(dest.compute_units)),
      1.0 - g);
  return origin_us * bw * clk * sm;
}

bool lacksComputeFacts(const DeviceSpec& d) {
  return d.kind == DeviceKind::kGpu && d.compute_units <= 1;
}

bool lacksCacheFacts(const DeviceSpec& origin, const DeviceSpec& dest) {
  return origin.kind == DeviceKind::kGpu && dest.kind == DeviceKind::kGpu &&
         origin.caches.empty() && !dest.caches.empty();
}

DeviceSpec scalingOrigin(const DeviceSpec& origin, const DeviceSpec& dest) {
  DeviceSpec out = origin;
  if (lacksComputeFacts(origin)) {
    out.compute_units = dest.compute_units;
    out.clock_hz = dest.clock_hz;
  }
  if (lacksCacheFacts(origin, dest)) out.caches = dest.caches;
  return out;
}

double commScale(double origin_us, const DeviceSpec& origin, const DeviceSpec& dest,
                 const std::string& link) {
  const LinkSpec* lo = pickLink(origin, link);
  const LinkSpec* ld = pickLink(dest, link);
  if (!lo || !ld) return origin_us;
  return origin_us * ratio(lo->bandwidth, ld->bandwidth);
}

}  // namespace tracetwin::predictors
