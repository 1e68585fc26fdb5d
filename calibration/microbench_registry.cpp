// The registry of microbenchmark families and the helpers their grids share.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "calibration/graph_builder.h"
#include "calibration/microbench.h"
#include "core/errors.h"

namespace tracetwin::calibration {

const std::vector<MicrobenchFamily>& microbenchRegistry() {
  // Budget weights follow where the bundled workloads spend their time: GEMM
  // and convolution dominate (ResNet-18: convolution_backward ~56% of the
  // step), memory-bound families share the rest. GEMM's 4,000 samples of a
  // 240 s sweep already cover its grid densely; convolution, whose layers
  // vary more, gets the larger share.
  static const std::vector<MicrobenchFamily> registry = {
      {"gemm", "mm, addmm, linear, bmm over M,N,K (and batch) grids", 0.18, gemmCases},
      {"conv",
       "conv2d forward + convolution_backward over N,C,K,H,W,filter,stride, depthwise; "
       "conv_transpose2d + its backward",
       0.24, convCases},
      {"embedding_bag",
       "embedding_bag (+ _embedding_bag_backward) and embedding over batch, rows, pooling, dim, "
       "index reuse",
       0.12, embeddingCases},
      {"elementwise", "add/mul/div/relu/gelu/sigmoid/threshold_backward/optimizer updates by size",
       0.12, elementwiseCases},
      {"reduction",
       "sum/mean/amax, max_pool2d (+ backward), adaptive_avg_pool2d, BCE-with-logits loss", 0.08,
       reductionCases},
      {"softmax", "softmax/log_softmax (+ backward), cross_entropy_loss", 0.07, softmaxCases},
      {"norm", "batch_norm, layer_norm and their backward ops", 0.08, normCases},
      {"copy", "copy_, cat, stack, clone, transpose+contiguous, item, index, index_put_", 0.07,
       copyCases},
      {"view", "metadata-only ops (t, view, transpose, reshape, select, ...) and empty", 0.04,
       viewCases},
  };
  return registry;
}

std::vector<std::string> microbenchFamilyNames() {
  std::vector<std::string> names;
  for (const MicrobenchFamily& f : microbenchRegistry()) names.push_back(f.name);
  return names;
}

const MicrobenchFamily& microbenchFamily(const std::string& name) {
  for (const MicrobenchFamily& f : microbenchRegistry()) {
    if (f.name == name) return f;
  }
  std::string known;
  for (const std::string& n : microbenchFamilyNames()) known += (known.empty() ? "" : ", ") + n;
  throw UsageError(
      fmt::format("unknown microbenchmark family '{}'; known families: {}", name, known));
}

double estimateOpUs(double flops, double flop_rate, double bytes) {
  return kEstOpUs + 1e6 * std::max(flops / flop_rate, bytes / kEstBytesPerS);
}

int repeatsFor(double op_us) {
  constexpr double kTargetUs = 500.0;
  const int r = static_cast<int>(std::ceil(kTargetUs / std::max(op_us, 1.0)));
  return std::clamp(r, 1, 8);
}

MicrobenchCase repeatedCase(const GridOptions& grid, std::string family, std::string label,
                            double copy_us, std::function<void(GraphBuilder&)> add) {
  MicrobenchCase c;
  c.family = std::move(family);
  c.label = std::move(label);
  if (grid.accelerator && copy_us > kEstOpUs)
    copy_us = kEstOpUs + (copy_us - kEstOpUs) / kAcceleratorSpeedup;
  const int reps = repeatsFor(copy_us);
  c.est_us = copy_us * reps;
  c.copy_us = copy_us;
  c.add_copy = add;
  c.build = [reps, add = std::move(add), device = grid.device, label = c.label] {
    GraphBuilder b(device);
    for (int r = 0; r < reps; ++r) {
      if (r > 0) b.spacer();
      add(b);
    }
    return b.build("microbenchmark " + label);
  };
  return c;
}

const char* unitRefillName(UnitRefill r) {
  switch (r) {
    case UnitRefill::kAll:
      return "all";
    case UnitRefill::kSettle:
      return "settle";
    case UnitRefill::kIndices:
      return "indices";
  }
  return "all";
}

std::string dtypeLabel(core::DType dtype) { return core::dtypeName(dtype); }

int64_t scalarTypeCode(core::DType dtype) {
  switch (dtype) {
    case core::DType::kFloat16:
      return 5;
    case core::DType::kBFloat16:
      return 15;
    case core::DType::kFloat64:
      return 7;
    default:
      return 6;
  }
}

std::vector<int64_t> matrixShape(int64_t numel) {
  int64_t cols = 1;
  while (cols < 1024 && cols * 2 <= numel && numel % (cols * 2) == 0) cols *= 2;
  return {numel / cols, cols};
}

std::vector<double> uniformReuseHistogram(int64_t lookups, int64_t rows) {
  // Access count of one row ~ Binomial(lookups, 1/rows) ~ Poisson(lambda);
  // condition on being touched (count >= 1) and bin by (2^(b-1), 2^b].
  constexpr int kBins = 8;
  std::vector<double> hist(kBins, 0.0);
  if (lookups <= 0 || rows <= 0) return hist;
  const double lambda = static_cast<double>(lookups) / static_cast<double>(rows);
  const double touched = 1.0 - std::exp(-lambda);
  if (touched <= 0) return hist;
  // P(count = k) in log space: exp(-lambda) underflows for hot rows (lambda
  // in the thousands when 100k lookups hit 64 rows).
  double covered = 0;
  const int64_t kmax = static_cast<int64_t>(lambda + 12.0 * std::sqrt(lambda) + 64.0);
  for (int64_t k = 1; k <= kmax; ++k) {
    const double kd = static_cast<double>(k);
    const double pk = std::exp(-lambda + kd * std::log(lambda) - std::lgamma(kd + 1.0));
    int bin = 0;
    while (bin < kBins - 1 && k > (int64_t{1} << bin)) ++bin;
    hist[bin] += pk;
    covered += pk;
  }
  hist[kBins - 1] += std::max(0.0, touched - covered);
  for (double& h : hist) h /= touched;
  return hist;
}

}  // namespace tracetwin::calibration
