// Problem sizes of the compute-heavy families, read from a node's arguments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.h"

namespace tracetwin::predictors {

struct GemmShape {
  double m = 1, n = 1, k = 1, batch = 1;
  // Operands the kernel reads transposed (column-major in memory): A from
  // its strides, B from its strides or the op (linear's weight is [N, K]).
  // Reference BLAS runs linear's A·Wᵀ ~1.5x slower than a plain mm.
  bool a_transposed = false, b_transposed = false;
  int64_t itemsize = 4;
  core::DType dtype = core::DType::kFloat32;
};
GemmShape gemmShape(const core::Node& node);

// bfloat16 or float16 when a tensor of `node` (input or output) has that
// dtype, else kUnknown: the op ran a half-precision kernel path (an autocast
// GEMM, its casts, the ops on its outputs). On a CPU those are other
// kernels than float32's, not the same ones on half the bytes: LibTorch
// 1.13 runs bf16 GEMMs through oneDNN at ~10x its float32 BLAS rate and
// bf16 elementwise ops ~2x slower per element.
core::DType halfPrecisionOf(const core::Node& node);

struct ConvShape {
  double n = 1, c = 1, h = 1, w = 1, k = 1;  // batch, in channels, spatial, out channels
  double filter = 1;                         // prod(kernel dims)
  double in_spatial = 1, out_spatial = 1;
  int64_t stride = 1, dilation = 1;
  double groups = 1;
  bool backward = false;
  // LibTorch 1.13 on a CPU with one intra-op thread runs this convolution
  // through its native (im2col + BLAS) kernels instead of oneDNN: 1x1
  // unstrided filters below batch 16, or batch 1 with small filters and
  // small maps (ConvParams::use_mkldnn). The two paths differ up to 10x.
  bool cpu_native_path = false;
  // A transposed convolution (ConvTranspose): `c` is its input's channels
  // and `k` its output's, as for any other; out_spatial is the grown map.
  bool transposed = false;
  // A bias: the forward adds it, the backward sums grad_output into its
  // gradient (output_mask[2]). On a GPU that is a pass over the whole output
  // beside cuDNN's kernel: an H200 ran [128,64,56,56] -> 128 channels 1x1
  // with a bias at 26 TFLOP/s, ResNet-50's layers of that size without one
  // at 66.
  bool bias = false;
  int64_t itemsize = 4;
  core::DType dtype = core::DType::kFloat32;
};
ConvShape convShape(const core::Node& node);

struct EmbeddingShape {
  double batch = 1, rows = 1, pooling = 1, dim = 1;
  bool backward = false;
  bool bagged = false;  // reads offsets: embedding_bag's pooling path, not a plain gather
  // sparse=True: the table's gradient is a COO tensor of the looked-up rows;
  // a step then writes no rows x dim gradient, and the table's hot rows stay
  // cached from one lookup to the next (docs/calibration.md).
  bool sparse = false;
  int64_t itemsize = 4;
  core::DType dtype = core::DType::kFloat32;
};
EmbeddingShape embeddingShape(const core::Node& node);

struct CommShape {
  std::string collective = "all_reduce";
  int64_t world_size = -1;  // -1: not recorded
  double bytes = 0;
};
CommShape commShape(const core::Node& node);

// FLOPs per element of memory-bound ops (add 1, exp 4, gelu 8, softmax 5 ...).
double flopsPerElement(const std::string& op);

// Expected reuse histogram (kReuseBins bins of access counts per unique row)
// for `lookups` uniformly random indices into `rows` rows: counts are
// Poisson(lookups/rows), conditioned on being >= 1.
std::vector<double> poissonReuseHistogram(double lookups, double rows);
// The same histogram when row i is drawn with probability proportional to
// (i+1)^-exponent (a Zipf-skewed table): row i's expected count c_i; touched
// with probability 1 - exp(-c_i), then counted c_i / (1 - exp(-c_i)) times on
// average, in that count's bin. Hot rows are many lookups each, so the unique
// fraction falls: a 5,000-row table with 1,024 lookups at exponent 1.1 has
// 0.30 of its lookups unique against 0.90 uniform. One value more than the
// bins: the expected unique fraction itself (features.h, kReuseValuesWithUnique).
// `first_row` > 0: the rows are [first_row, first_row + rows) of a larger Zipf
// table (a row-wise shard's tail), row i weighted (first_row + i + 1)^-exponent.
std::vector<double> zipfReuseHistogram(double lookups, int64_t rows, double exponent,
                                       int64_t first_row = 0);
// Unique rows / lookups: a histogram's own value when it carries one, else
// implied by its bins (mid-points 1,2,3,6,12,...).
double uniqueFraction(const std::vector<double>& histogram);

}  // namespace tracetwin::predictors
