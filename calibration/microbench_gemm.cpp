// GEMM microbenchmarks: mm, addmm, linear (the op nn.Linear records) and bmm
// over grids of M, N, K (and batch). Sizes mix powers of two with the odd
// sizes real layers have (13 dense features, 36 interaction pairs, 100).
#include <fmt/core.h>

#include "calibration/graph_builder.h"
#include "calibration/microbench.h"
#include "core/aten_schemas.h"

namespace tracetwin::calibration {
namespace {

using core::DType;
using core::Value;
using B = GraphBuilder;

const std::vector<int64_t> kSizes = {1, 8, 13, 32, 64, 100, 128, 256, 384, 512, 768, 1024};
const std::vector<int64_t> kBatchSizes = {1, 2, 4, 8, 16, 32, 64, 128, 256};
const std::vector<int64_t> kBatchedSizes = {1, 4, 9, 16, 32, 64, 128, 256};
// One iteration of the largest point stays under ~0.1 s at ~4 GFLOP/s.
constexpr double kMaxFlops = 4e8;
// A GPU (GridOptions::accelerator): an MLP at batch 4096 multiplies 4096 x
// 4096 x 1024, which the CPU grid's roofline and boosters would only reach
// by extrapolation (an H100 calibrated on the CPU grid predicted such a
// model's GEMMs 71% slow). ~1.1 TFLOP at most: tens of ms in float32.
const std::vector<int64_t> kAcceleratorSizes = {2048, 4096, 8192};
const std::vector<int64_t> kAcceleratorBatchedSizes = {512, 1024};
constexpr double kAcceleratorMaxFlops = 1.2e12;

// Operands past the last-level cache (CPU). Debian's LibTorch multiplies with
// the reference BLAS, whose loops run through all of mat2 (linear: the
// weight) once per row of the result: the grid's K x N, at most 4 MiB, stays
// in the caches, while data/h100/mlp_big's 4096 x 4096 weights (64 MiB) come
// from DRAM every time. Replayed here, its 4096^3 mm ran at 4.9 GFLOP/s
// against 6.0 for 512^3, and the grid's trees put them 17-27% fast. The rate
// depends on K and N, not on the number of rows: [64 x 4096] x [4096 x 4096]
// runs at 4.9 as well (and [64 x 2048] x [2048 x 2048], 16 MiB, at 6.1), in
// 0.4 s instead of 28. So these points span K and N to 4096 with few rows.
const std::vector<int64_t> kWideSizes = {2048, 4096};
const std::vector<int64_t> kWideRows = {16, 64};

constexpr const char* kMm = core::schemas::kMm;
constexpr const char* kAddmm =
    "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> "
    "Tensor";
constexpr const char* kLinear = core::schemas::kLinear;
constexpr const char* kBmm = "aten::bmm(Tensor self, Tensor mat2) -> Tensor";

// Adds one op computing [m,k] x [k,n] in the flavour `kind`.
void addGemm(B& b, const std::string& kind, int64_t m, int64_t n, int64_t k, DType dt) {
  if (kind == "mm") {
    b.op(kMm, {b.tensor({m, k}, dt), b.tensor({k, n}, dt)}, {b.tensor({m, n}, dt)});
  } else if (kind == "addmm") {
    b.op(kAddmm,
         {b.tensor({n}, dt), b.tensor({m, k}, dt), b.tensor({k, n}, dt), B::intValue(1),
          B::intValue(1)},
         {b.tensor({m, n}, dt)});
  } else {  // linear: weight is [out, in] = [n, k]
    b.op(kLinear, {b.tensor({m, k}, dt), b.tensor({n, k}, dt), b.tensor({n}, dt)},
         {b.tensor({m, n}, dt)});
  }
}

MicrobenchCase gemmCase(const GridOptions& grid, const std::string& kind, int64_t m, int64_t n,
                        int64_t k, DType dt) {
  const double flops = 2.0 * m * n * k;
  const double bytes = static_cast<double>(m * k + k * n + m * n) * core::dtypeItemsize(dt);
  return repeatedCase(
      grid, "gemm", fmt::format("{} m={} n={} k={} {}", kind, m, n, k, dtypeLabel(dt)),
      estimateOpUs(flops, kEstGemmFlops, bytes), [=](B& b) { addGemm(b, kind, m, n, k, dt); });
}

MicrobenchCase bmmCase(const GridOptions& grid, int64_t batch, int64_t m, int64_t n, int64_t k,
                       DType dt) {
  const double flops = 2.0 * batch * m * n * k;
  const double bytes =
      static_cast<double>(batch * (m * k + k * n + m * n)) * core::dtypeItemsize(dt);
  return repeatedCase(grid, "gemm",
                      fmt::format("bmm b={} m={} n={} k={} {}", batch, m, n, k, dtypeLabel(dt)),
                      estimateOpUs(flops, kEstGemmFlops, bytes), [=](B& b) {
                        b.op(kBmm, {b.tensor({batch, m, k}, dt), b.tensor({batch, k, n}, dt)},
                             {b.tensor({batch, m, n}, dt)});
                      });
}

}  // namespace

std::vector<MicrobenchCase> gemmCases(const GridOptions& grid) {
  std::vector<MicrobenchCase> cases;
  const std::vector<int64_t> sizes = withAccelerator(kSizes, kAcceleratorSizes, grid.accelerator);
  const std::vector<int64_t> batched =
      withAccelerator(kBatchedSizes, kAcceleratorBatchedSizes, grid.accelerator);
  const double max_flops = grid.accelerator ? kAcceleratorMaxFlops : kMaxFlops;
  for (DType dt : grid.dtypes) {
    for (const char* kind : {"mm", "addmm", "linear"}) {
      for (int64_t m : sizes) {
        for (int64_t n : sizes) {
          for (int64_t k : sizes) {
            if (2.0 * m * n * k > max_flops) continue;
            cases.push_back(gemmCase(grid, kind, m, n, k, dt));
          }
        }
      }
    }
    if (!grid.accelerator) {  // the accelerator's sizes reach 8192 anyway
      for (const char* kind : {"mm", "addmm", "linear"}) {
        for (int64_t m : kWideRows) {
          for (int64_t n : kWideSizes) {
            for (int64_t k : kWideSizes) cases.push_back(gemmCase(grid, kind, m, n, k, dt));
          }
        }
      }
    }
    for (int64_t batch : kBatchSizes) {
      for (int64_t m : batched) {
        for (int64_t n : batched) {
          for (int64_t k : batched) {
            if (2.0 * batch * m * n * k > max_flops) continue;
            cases.push_back(bmmCase(grid, batch, m, n, k, dt));
          }
        }
      }
    }
  }
  return cases;
}

}  // namespace tracetwin::calibration
