// The analytic base of the convolution family: a linear cost per lowering
// path, under the family's XGBoost residual.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "predictors/models/analytic_fit.h"
#include "predictors/kernels/kernel_model.h"

namespace tracetwin::predictors {

// t = t0 + a * compute + b * activation traffic + c * weight traffic, with
// compute = flops / peak(dtype) and each traffic = bytes / DRAM bandwidth (so
// a, b and c are inverse efficiencies, comparable across devices), and one
// set of (t0, a, b, c) per path: forward or backward, LibTorch's native
// im2col path or oneDNN, grouped or dense. The native path multiplies image
// by image and reads the whole weight each time, so its weight traffic is
// the batch times the weight.
//
// Why not the roofline the GEMM family uses: one compute efficiency cannot
// serve paths whose rates differ tenfold (the native path runs ~5 GFLOP/s on
// this host, oneDNN dense convolutions several times that), and a max() of
// two roofs has no term for a skinny layer that streams its weight. The
// roofline missed the calibration samples by 30% (GMAE), so the trees on top
// carried factors of 2-3 and, between grid points, put them where the
// nearest sampled shape was. Fitted on three random thirds of one
// calibration's conv points, the roofline's trees missed the conv ops of 9
// networks by 8.8-11.2% on average, these paths' by 7.1-9.0%; the base
// alone misses the samples by ~14% (docs/prediction.md, 2026-11-25).
class ConvPathModel : public KernelModel {
 public:
  struct Terms {
    double t0_us = 0.0;
    double compute = 1.0;      // x flops / peak(dtype)
    double activations = 1.0;  // x (input + output bytes) / DRAM bandwidth
    double weights = 1.0;      // x weight bytes / DRAM bandwidth
    int64_t samples = 0;       // fitted on (0: not fitted)
  };
  // Used for a path with too few calibration samples of its own.
  Terms pooled;
  std::map<std::string, Terms> paths;  // by pathKey()

  std::string kind() const override { return "conv_path"; }
  double predictUs(const OpFeatures& f, const DeviceSpec& d) const override;
  nlohmann::json save(const std::string& dir, const std::string& stem) const override;
  static std::shared_ptr<const KernelModel> fromJson(const nlohmann::json& j,
                                                     const std::string& dir);

  // "fwd/onednn/dense", "bwd/native/dense", ... from the conv feature
  // columns (backward, log2 groups, native path).
  static std::string pathKey(const OpFeatures& f);
  // Whether a CPU runs the convolution on LibTorch's native im2col + BLAS
  // path (no code generated per shape, unlike oneDNN's).
  static bool nativePath(const OpFeatures& f);
  // The three terms' inputs in microseconds at efficiency 1.
  struct Inputs {
    double compute_us = 0, activation_us = 0, weight_us = 0;
  };
  static Inputs inputsOf(const OpFeatures& f, const DeviceSpec& d);
  const Terms& termsFor(const OpFeatures& f) const;
};

// Per path, weighted least squares of t on (1, compute, activations,
// weights); a coefficient that comes out negative is dropped and the rest
// refitted. Paths with fewer than kMinPathSamples use the pooled fit.
std::shared_ptr<ConvPathModel> fitConvPaths(const std::vector<const Sample*>& s,
                                            const DeviceSpec& d);

}  // namespace tracetwin::predictors
