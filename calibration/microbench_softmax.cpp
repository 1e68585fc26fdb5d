// Softmax microbenchmarks: softmax/log_softmax over the last dim, their
// backward ops, and cross_entropy_loss (log_softmax + nll_loss, as models
// record it), over [rows, cols] from classifier heads to attention scores.
#include <fmt/core.h>

#include "calibration/graph_builder.h"
#include "calibration/microbench.h"

namespace tracetwin::calibration {
namespace {

using core::DType;
using B = GraphBuilder;

const std::vector<int64_t> kSoftmaxRows = {1, 4, 16, 32, 128, 512, 2048, 8192};
const std::vector<int64_t> kCols = {2, 10, 32, 128, 1000, 4096};
constexpr int64_t kSoftmaxMaxNumel = int64_t{1} << 23;

constexpr const char* kSoftmax =
    "aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor";
constexpr const char* kLogSoftmax =
    "aten::log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor";
constexpr const char* kSoftmaxBackward =
    "aten::_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType "
    "input_dtype) -> Tensor";
constexpr const char* kLogSoftmaxBackward =
    "aten::_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType "
    "input_dtype) -> Tensor";
constexpr const char* kCrossEntropy =
    "aten::cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
    "int ignore_index=-100, float label_smoothing=0.) -> Tensor";

void addSoftmaxOps(B& b, int64_t rows, int64_t cols, DType dt) {
  const std::vector<int64_t> s = {rows, cols};
  for (const char* fwd : {kSoftmax, kLogSoftmax}) {
    b.op(fwd, {b.tensor(s, dt), B::intValue(-1), B::none()}, {b.tensor(s, dt)});
  }
  for (const char* bwd : {kSoftmaxBackward, kLogSoftmaxBackward}) {
    b.op(bwd, {b.tensor(s, dt), b.tensor(s, dt), B::intValue(-1), B::intValue(scalarTypeCode(dt))},
         {b.tensor(s, dt)});
  }
  b.op(kCrossEntropy,
       {b.tensor(s, dt), b.tensor({rows}, DType::kInt64), B::none(), B::intValue(1),
        B::intValue(-100), B::doubleValue(0.0)},
       {b.tensor({}, dt)});
}

}  // namespace

std::vector<MicrobenchCase> softmaxCases(const GridOptions& grid) {
  std::vector<MicrobenchCase> cases;
  for (DType dt : grid.dtypes) {
    for (int64_t rows : kSoftmaxRows) {
      for (int64_t cols : kCols) {
        if (rows * cols > kSoftmaxMaxNumel) continue;
        const double bytes = static_cast<double>(rows * cols * core::dtypeItemsize(dt));
        // Five ops reading/writing 2-3 tensors each.
        const double ops_us = 5 * estimateOpUs(0, 1, 3 * bytes);
        cases.push_back(repeatedCase(
            grid, "softmax", fmt::format("softmax ops [{}x{}] {}", rows, cols, dtypeLabel(dt)),
            ops_us, [=](B& b) { addSoftmaxOps(b, rows, cols, dt); }));
      }
    }
  }
  return cases;
}

}  // namespace tracetwin::calibration
