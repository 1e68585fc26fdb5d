// Analytic kernel models: each is a formula with a few parameters, built from
// a device spec alone (fallback) or fitted to measurements (training.cpp).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "predictors/kernels/kernel_model.h"

namespace tracetwin::predictors {

// t = t0 + max(flops / (peak(dtype) * compute_eff), bytes / (BW * memory_eff)).
class RooflineModel : public KernelModel {
 public:
  double t0_us = 2.0;
  double compute_eff = 0.8;  // H100 bf16 8192^3 matmul: 798 / 989 TFLOP/s
  double memory_eff = 0.9;   // H100 D2D copy: 3.0 / 3.35 TB/s
  std::string kind() const override { return "roofline"; }
  // t0 + the slower of compute and memory at the fitted efficiencies (which
  // a residual scales), and predictUs that bounded by computeFloorUs.
  double hotUs(const OpFeatures& f, const DeviceSpec& d) const override;
  double predictUs(const OpFeatures& f, const DeviceSpec& d) const override;
  double computeFloorUs(const OpFeatures& f, const DeviceSpec& d) const override;
  nlohmann::json save(const std::string& dir, const std::string& stem) const override;
  static std::shared_ptr<const KernelModel> fromJson(const nlohmann::json& j,
                                                     const std::string& dir);
};

// Memory-bound ops: t = t0(op) + max(factor(op) * max(flops / peak, bytes / BW(bytes)),
//                                   cold_bytes / DRAM BW),
// with an achieved-bandwidth curve BW over log2(bytes), linear between knots
// and flat beyond the ends. t0 and factor are looked up by the op's variant
// (OpFeatures::variant), then its name, then the family-wide value: a
// one-element add_ costs 0.6 us with a float operand and 2 us with a 0-dim
// long one, so one intercept per family cannot fit both.
class BandwidthCurveModel : public KernelModel {
 public:
  // op_t0_us key suffix of the fixed cost when the op follows a copy of
  // itself (OpFeatures::repeated).
  static constexpr const char* kRepeatedSuffix = "@rep";
  double t0_us = 2.0;
  std::vector<double> knots_log2_bytes;     // ascending
  std::vector<double> knots_bandwidth;      // bytes/s at each knot
  std::map<std::string, double> op_factor;  // fitted per-op multipliers
  std::map<std::string, double> op_t0_us;   // fitted per-op fixed costs
  // Beyond the last knot the curve is flat, unless this is above the last
  // knot's bandwidth: then the time stays at the last knot's until the
  // bandwidth reaches this (bytes/s). Set by the fit on a GPU whose samples
  // all fit in its L2: there a small op is bound by launch latency, and its
  // achieved bandwidth says nothing of a large one's. A softmax fitted on
  // three cross-entropy samples of ~200 KB (14 GB/s) put transformer_big's
  // 500 MB vocabulary softmax at 38 ms on an H100. 0: flat (older files).
  double extrapolate_bandwidth = 0;
  std::string kind() const override { return "bandwidth_curve"; }
  double predictUs(const OpFeatures& f, const DeviceSpec& d) const override;
  double hotUs(const OpFeatures& f, const DeviceSpec& d) const override;
  double coldFloorUs(const OpFeatures& f, const DeviceSpec& d) const override;
  double achievedBandwidth(double bytes) const;
  // Working-set size where the fitted curve falls off its cache plateau: the
  // first knot after the peak below 75% of it, halved (the knots are two
  // octaves apart); 0 when the curve never falls. On this host 8 MiB, far
  // below the 32 MiB L3 the VM reports (shared with other tenants): the
  // sweeps of 2026-11-22 fell to 62-66% of the peak at 16 MiB, which a 60%
  // threshold missed, so tensors of 1-20 MB counted as cache-hot.
  double cacheKneeBytes() const;
  double factor(const std::string& op) const;
  // Lookups by variant, then op name, then the family value.
  double factorOf(const OpFeatures& f) const;
  double t0Of(const OpFeatures& f) const;
  nlohmann::json save(const std::string& dir, const std::string& stem) const override;
  static std::shared_ptr<const KernelModel> fromJson(const nlohmann::json& j,
                                                     const std::string& dir);
  // From the spec: LLC bandwidth up to the LLC size, 90% of DRAM beyond.
  static std::shared_ptr<BandwidthCurveModel> fromDevice(const DeviceSpec& d);
};

// Embedding lookups: gathered rows hit the cache with probability
// h = 1 - unique_fraction * (1 - min(1, LLC / table_bytes)); the rest come
// from DRAM. t = t0 + (gathered*(h/BW_llc + (1-h)/BW_dram) + out/BW_dram) / eff.
class CacheModel : public KernelModel {
 public:
  double t0_us = 3.0;
  double eff = 0.6;  // gathers of short rows reach well under peak bandwidth
  std::string kind() const override { return "cache_model"; }
  double predictUs(const OpFeatures& f, const DeviceSpec& d) const override;
  // The bracketed memory time in microseconds at eff = 1.
  static double memoryTimeUs(const OpFeatures& f, const DeviceSpec& d);
  nlohmann::json save(const std::string& dir, const std::string& stem) const override;
  static std::shared_ptr<const KernelModel> fromJson(const nlohmann::json& j,
                                                     const std::string& dir);
};

// Views and other near-constant ops: per-op median, else the family median.
class ConstantModel : public KernelModel {
 public:
  double default_us = 0.0;
  std::map<std::string, double> op_us;
  std::string kind() const override { return "constant"; }
  double predictUs(const OpFeatures& f, const DeviceSpec& d) const override;
  nlohmann::json save(const std::string& dir, const std::string& stem) const override;
  static std::shared_ptr<const KernelModel> fromJson(const nlohmann::json& j,
                                                     const std::string& dir);
};

// Launch latency assumed by fallbacks: ~2 us for a GPU kernel (launch to
// start on an idle stream), ~0.5 us for a CPU op body.
double defaultLaunchUs(const DeviceSpec& d);

}  // namespace tracetwin::predictors
