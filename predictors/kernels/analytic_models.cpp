#include "predictors/kernels/analytic_models.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/errors.h"
#include "predictors/models/json_fields.h"
#include "core/units.h"

namespace tracetwin::predictors {
namespace {

using core::kUsPerSecond;


}  // namespace

double defaultLaunchUs(const DeviceSpec& d) { return d.kind == DeviceKind::kGpu ? 2.0 : 0.5; }

double RooflineModel::hotUs(const OpFeatures& f, const DeviceSpec& d) const {
  double compute = f.flops / (d.peakFlops(f.dtype) * compute_eff);
  double memory = f.bytes / (d.memory_bandwidth * memory_eff);
  return t0_us + std::max(compute, memory) * kUsPerSecond;
}

double RooflineModel::predictUs(const OpFeatures& f, const DeviceSpec& d) const {
  return std::max(hotUs(f, d), computeFloorUs(f, d));
}

// A calibrated device's listed peak is its measured GEMM rate (an 8192^3 mm
// on a GPU): no GEMM of that dtype beat it by more than 6% in any calibration
// (an H100 reached 0.98 of it, the EPYC host 1.06 on in-cache shapes). The
// trees of a residual know only the sizes they sampled: 4096^3 float32 GEMMs
// on an H100 came out at 1.5x the measured peak, from half-precision points
// of similar shapes. The floor leaves 10% headroom.
double RooflineModel::computeFloorUs(const OpFeatures& f, const DeviceSpec& d) const {
  constexpr double kPeakHeadroom = 1.1;
  const double peak = d.listedPeakFlops(f.dtype);
  if (peak <= 0 || f.flops <= 0) return 0.0;
  return f.flops / (peak * kPeakHeadroom) * kUsPerSecond;
}

nlohmann::json RooflineModel::save(const std::string&, const std::string&) const {
  return {{"t0_us", t0_us}, {"compute_eff", compute_eff}, {"memory_eff", memory_eff}};
}

namespace {

// Bounds far outside any fitted value, so that a corrupt file is refused
// here, naming its key, rather than predicted as a negative time, or as nan
// later blamed on "the model set" as a whole: an op's fixed time up to 1,000
// s, an efficiency against the listed peak up to 1,000 (caches beat the
// memory's), an op's factor on its family's curve up to 10^6 (the H200's
// aten::item, a device sync, is 4,207 times its bytes' copy), a bandwidth up
// to 10^15 B/s.
constexpr double kMaxOpUs = 1e9;
constexpr double kMaxEfficiency = 1e3;
constexpr double kMaxOpFactor = 1e6;
constexpr double kMaxBandwidth = 1e15;

void requireTime(const char* model, const std::string& key, double us) {
  if (!(us >= 0 && us <= kMaxOpUs)) {
    throw InputError(
        fmt::format("{}: {} must be from 0 to {:g} us, got {:g}", model, key, kMaxOpUs, us));
  }
}

void requirePositive(const char* model, const std::string& key, double value, double most) {
  if (!(value > 0 && value <= most)) {
    throw InputError(
        fmt::format("{}: {} must be > 0 and at most {:g}, got {:g}", model, key, most, value));
  }
}

void requireEfficiency(const char* model, const std::string& key, double eff) {
  requirePositive(model, key, eff, kMaxEfficiency);
}

}  // namespace

std::shared_ptr<const KernelModel> RooflineModel::fromJson(const nlohmann::json& j,
                                                           const std::string&) {
  auto m = std::make_shared<RooflineModel>();
  m->t0_us = requiredNumber(j, "t0_us", "roofline model");
  m->compute_eff = requiredNumber(j, "compute_eff", "roofline model");
  m->memory_eff = requiredNumber(j, "memory_eff", "roofline model");
  requireEfficiency("roofline model", "compute_eff", m->compute_eff);
  requireEfficiency("roofline model", "memory_eff", m->memory_eff);
  requireTime("roofline model", "t0_us", m->t0_us);
  return m;
}

double BandwidthCurveModel::achievedBandwidth(double bytes) const {
  if (knots_log2_bytes.empty()) return 1e9;
  double x = std::log2(std::max(bytes, 1.0));
  if (x <= knots_log2_bytes.front()) return knots_bandwidth.front();
  if (x >= knots_log2_bytes.back()) {
    const double last = knots_bandwidth.back();
    if (extrapolate_bandwidth <= last) return last;
    return std::min(extrapolate_bandwidth, last * std::exp2(x - knots_log2_bytes.back()));
  }
  auto hi = std::upper_bound(knots_log2_bytes.begin(), knots_log2_bytes.end(), x);
  size_t i = static_cast<size_t>(hi - knots_log2_bytes.begin());
  double x0 = knots_log2_bytes[i - 1], x1 = knots_log2_bytes[i];
  double w = (x - x0) / (x1 - x0);
  return knots_bandwidth[i - 1] * (1 - w) + knots_bandwidth[i] * w;
}

double BandwidthCurveModel::cacheKneeBytes() const {
  constexpr double kKneeShare = 0.75;
  size_t peak = 0;
  for (size_t i = 0; i < knots_bandwidth.size(); ++i) {
    if (knots_bandwidth[i] > knots_bandwidth[peak]) peak = i;
  }
  for (size_t i = peak + 1; i < knots_bandwidth.size(); ++i) {
    if (knots_bandwidth[i] < kKneeShare * knots_bandwidth[peak]) {
      return std::exp2(knots_log2_bytes[i] - 1.0);
    }
  }
  return 0.0;
}

double BandwidthCurveModel::factor(const std::string& op) const {
  auto it = op_factor.find(op);
  return it == op_factor.end() ? 1.0 : it->second;
}

namespace {

// Ops whose work is another op's kernel: `to` and `_to_copy` convert through
// `copy_` (under bf16 autocast Kineto shows the copy kernel,
// bfloat16_copy_kernel, below each `aten::to`). Without a fit of their own
// they take that op's factor and fixed cost, not the family curve's 1.0: the
// curve is shared by ops whose factors span 0.25 (copy_) to 8.5 (index_put),
// and the H100 encoder bf16 step's 16 casts were predicted at 742 us against
// 234 recorded (copy_'s factor on the H200 set is 0.25).
const char* kernelOwnerOf(const std::string& op) {
  if (op == "aten::to" || op == "aten::_to_copy") return "aten::copy_";
  return nullptr;
}

double lookup(const std::map<std::string, double>& m, const OpFeatures& f, double fallback) {
  if (!f.variant.empty()) {
    if (auto it = m.find(f.variant); it != m.end()) return it->second;
  }
  if (auto it = m.find(f.op); it != m.end()) return it->second;
  if (const char* owner = kernelOwnerOf(f.op)) {
    if (auto it = m.find(owner); it != m.end()) return it->second;
  }
  return fallback;
}

}  // namespace

double BandwidthCurveModel::factorOf(const OpFeatures& f) const {
  return lookup(op_factor, f, 1.0);
}
double BandwidthCurveModel::t0Of(const OpFeatures& f) const {
  if (f.repeated) {
    auto it = op_t0_us.find(variantKey(f) + kRepeatedSuffix);
    if (it != op_t0_us.end()) return it->second;
  }
  return lookup(op_t0_us, f, t0_us);
}

double BandwidthCurveModel::hotUs(const OpFeatures& f, const DeviceSpec& d) const {
  double compute = f.flops / d.peakFlops(f.dtype);
  const double body = factorOf(f) * std::max(compute, f.bytes / achievedBandwidth(f.bytes));
  return t0Of(f) + body * kUsPerSecond;
}

// Cold inputs come from DRAM whatever the op's (cache-hot) factor: the body
// takes at least their DRAM time.
double BandwidthCurveModel::coldFloorUs(const OpFeatures& f, const DeviceSpec& d) const {
  if (f.cold_bytes <= 0 || d.memory_bandwidth <= 0) return 0.0;
  return t0Of(f) + f.cold_bytes / d.memory_bandwidth * kUsPerSecond;
}

double BandwidthCurveModel::predictUs(const OpFeatures& f, const DeviceSpec& d) const {
  return std::max(hotUs(f, d), coldFloorUs(f, d));
}

nlohmann::json BandwidthCurveModel::save(const std::string&, const std::string&) const {
  return {{"t0_us", t0_us},
          {"knots_log2_bytes", knots_log2_bytes},
          {"knots_bandwidth", knots_bandwidth},
          {"op_factor", op_factor},
          {"op_t0_us", op_t0_us},
          {"extrapolate_bandwidth", extrapolate_bandwidth}};
}

std::shared_ptr<const KernelModel> BandwidthCurveModel::fromJson(const nlohmann::json& j,
                                                                 const std::string&) {
  auto m = std::make_shared<BandwidthCurveModel>();
  m->t0_us = requiredNumber(j, "t0_us", "bandwidth_curve model");
  try {
    m->knots_log2_bytes = j.at("knots_log2_bytes").get<std::vector<double>>();
    m->knots_bandwidth = j.at("knots_bandwidth").get<std::vector<double>>();
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("bandwidth_curve model: bad knots: {}", e.what()));
  }
  if (m->knots_log2_bytes.size() != m->knots_bandwidth.size() || m->knots_bandwidth.empty() ||
      !std::is_sorted(m->knots_log2_bytes.begin(), m->knots_log2_bytes.end())) {
    throw InputError("bandwidth_curve model: knots must be non-empty, equal length and ascending");
  }
  for (double bw : m->knots_bandwidth) {
    if (!(bw > 0 && bw <= kMaxBandwidth)) {
      throw InputError(fmt::format(
          "bandwidth_curve model: knot bandwidths must be > 0 and at most {:g} B/s, got {:g}",
          kMaxBandwidth, bw));
    }
  }
  m->op_factor = optionalNumberMap(j, "op_factor", "bandwidth_curve model");
  // op_t0_us is absent in models from before per-op fixed costs.
  m->op_t0_us = optionalNumberMap(j, "op_t0_us", "bandwidth_curve model");
  // Fixed costs are fitted clamped at 0 and factors are ratios of times: a
  // negative one is a corrupt file (a -1e9 t0_us lowered every op silently).
  requireTime("bandwidth_curve model", "t0_us", m->t0_us);
  for (const auto& [op, us] : m->op_t0_us)
    requireTime("bandwidth_curve model", fmt::format("op_t0_us[{}]", op), us);
  for (const auto& [op, factor] : m->op_factor)
    requirePositive("bandwidth_curve model", fmt::format("op_factor[{}]", op), factor,
                    kMaxOpFactor);
  if (j.contains("extrapolate_bandwidth")) {
    m->extrapolate_bandwidth = requiredNumber(j, "extrapolate_bandwidth", "bandwidth_curve model");
    if (!(m->extrapolate_bandwidth >= 0 && m->extrapolate_bandwidth <= kMaxBandwidth)) {
      throw InputError(fmt::format(
          "bandwidth_curve model: extrapolate_bandwidth must be from 0 to {:g} B/s, got {:g}",
          kMaxBandwidth, m->extrapolate_bandwidth));
    }
  }
  return m;
}

std::shared_ptr<BandwidthCurveModel> BandwidthCurveModel::fromDevice(const DeviceSpec& d) {
  auto m = std::make_shared<BandwidthCurveModel>();
  m->t0_us = defaultLaunchUs(d);
  double dram = 0.9 * d.memory_bandwidth;
  int64_t llc = d.lastLevelCacheBytes();
  if (llc > 0) {
    // Working sets up to the LLC run at cache bandwidth, then fall to DRAM
    // over one octave beyond it (reads and writes both count).
    double x = std::log2(static_cast<double>(llc));
    m->knots_log2_bytes = {x, x + 1};
    m->knots_bandwidth = {std::max(dram, 0.9 * d.lastLevelCacheBandwidth()), dram};
  } else {
    m->knots_log2_bytes = {30};
    m->knots_bandwidth = {dram};
  }
  return m;
}

double CacheModel::memoryTimeUs(const OpFeatures& f, const DeviceSpec& d) {
  double llc = static_cast<double>(d.lastLevelCacheBytes());
  double resident = f.table_bytes > 0 ? std::min(1.0, llc / f.table_bytes) : 1.0;
  double hit = 1.0 - f.unique_fraction * (1.0 - resident);
  double gathered = f.gathered_bytes * (1.0 + (f.bytes > 2 * f.gathered_bytes ? 1.0 : 0.0));
  double rest = std::max(f.bytes - gathered, 0.0);
  double t = gathered * (hit / d.lastLevelCacheBandwidth() + (1 - hit) / d.memory_bandwidth) +
             rest / d.memory_bandwidth;
  return t * kUsPerSecond;
}

double CacheModel::predictUs(const OpFeatures& f, const DeviceSpec& d) const {
  return t0_us + memoryTimeUs(f, d) / eff;
}

nlohmann::json CacheModel::save(const std::string&, const std::string&) const {
  return {{"t0_us", t0_us}, {"eff", eff}};
}

std::shared_ptr<const KernelModel> CacheModel::fromJson(const nlohmann::json& j,
                                                        const std::string&) {
  auto m = std::make_shared<CacheModel>();
  m->t0_us = requiredNumber(j, "t0_us", "cache model");
  m->eff = requiredNumber(j, "eff", "cache model");
  requireEfficiency("cache model", "eff", m->eff);
  requireTime("cache model", "t0_us", m->t0_us);
  return m;
}

double ConstantModel::predictUs(const OpFeatures& f, const DeviceSpec&) const {
  if (f.repeated) {
    auto it = op_us.find(f.op + BandwidthCurveModel::kRepeatedSuffix);
    if (it != op_us.end()) return it->second;
  }
  auto it = op_us.find(f.op);
  return it == op_us.end() ? default_us : it->second;
}

nlohmann::json ConstantModel::save(const std::string&, const std::string&) const {
  return {{"default_us", default_us}, {"op_us", op_us}};
}

std::shared_ptr<const KernelModel> ConstantModel::fromJson(const nlohmann::json& j,
                                                           const std::string&) {
  auto m = std::make_shared<ConstantModel>();
  m->default_us = requiredNumber(j, "default_us", "constant model");
  m->op_us = optionalNumberMap(j, "op_us", "constant model");
  requireTime("constant model", "default_us", m->default_us);
  for (const auto& [op, us] : m->op_us)
    requireTime("constant model", fmt::format("op_us[{}]", op), us);
  return m;
}

}  // namespace tracetwin::predictors
