// Reduction microbenchmarks: sum/mean/amax over rows or columns of matrices,
// the pooling ops CNNs record (max_pool2d + its backward, adaptive average
// pooling) and the loss ops the core table files as reductions (a click
// model's binary cross-entropy).
#include <fmt/core.h>

#include <functional>

#include "calibration/graph_builder.h"
#include "calibration/microbench.h"
#include "core/aten_schemas.h"

namespace tracetwin::calibration {
namespace {

using core::DType;
using B = GraphBuilder;
using Shape = std::vector<int64_t>;

// [rows, cols] matrices; dim 0 or 1 reduced (bias gradients reduce dim 0).
const std::vector<Shape> kMatrices = {{1, 10},    {16, 10},     {32, 256},   {128, 64},
                                      {128, 1},   {256, 256},   {1024, 128}, {64, 4096},
                                      {4096, 64}, {1024, 1024}, {2048, 2048}};
// [N, C, H, W] feature maps for pooling.
const std::vector<Shape> kMaps = {{2, 64, 16, 16}, {16, 16, 32, 32}, {16, 32, 16, 16},
                                  {2, 512, 1, 1},  {8, 64, 56, 56},  {32, 128, 28, 28},
                                  {1, 3, 8, 8},    {4, 256, 14, 14}, {2, 512, 7, 7}};
// ResNet-50's stem and first stage at batch 32 (max_pool2d over 103 MB): an
// H200 needs maps past its L2 (elementwise grid, same reason).
const std::vector<Shape> kAcceleratorMaps = {{32, 64, 112, 112}, {32, 256, 56, 56}};
const std::vector<Shape> kAcceleratorMatrices = {{8192, 8192}};

constexpr const char* kSumDim =
    "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
    "dtype=None) -> Tensor";
constexpr const char* kMeanDim =
    "aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> "
    "Tensor";
constexpr const char* kAmax =
    "aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor";
constexpr const char* kRelu = core::schemas::kRelu;
constexpr const char* kMaxPool =
    "aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] "
    "padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)";
constexpr const char* kMaxPool2d =
    "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
    "int[2] dilation=1, bool ceil_mode=False) -> Tensor";
constexpr const char* kMaxPoolBackward =
    "aten::max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, "
    "int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor";
constexpr const char* kBceWithLogits =
    "aten::binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "
    "Tensor? pos_weight=None, int reduction=1) -> Tensor";
// Logit vectors for binary_cross_entropy_with_logits (a click model's loss).
const std::vector<int64_t> kLogits = {1, 16, 128, 1024, 16384, 262144};
constexpr const char* kAdaptiveAvg =
    "aten::adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor";

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

void addMatrixReduction(B& b, const char* schema, const Shape& s, int64_t dim, DType dt) {
  Shape out = s;
  out[static_cast<size_t>(dim)] = 1;
  const bool amax = schema == kAmax;
  std::vector<core::Value> in = {b.tensor(s, dt), B::intList({dim}), B::boolValue(true)};
  if (!amax) in.push_back(B::none());
  b.op(schema, std::move(in), {b.tensor(out, dt)});
}

// max_pool2d as the workloads record it, then the backward autograd runs
// (indices from the forward, so they are valid window offsets): 2x2 stride 2,
// and ResNet's stem pooling, 3x3 stride 2 padding 1, whose window reads 2.25x
// the inputs per output (resnet18_b4's took 1.37 ms in a step while the 2x2
// grid alone put it at 0.90).
// The pooled maps are a ReLU's output, as in the networks (conv, batch norm,
// ReLU, pool): the window's max is a data-dependent branch, and ReLU's zeros
// are ties that never take it. With randn maps the grid measured cnn's
// second pooling at 486 us; replayed in the step it took 400-432 us in every
// one of ten runs.
void addPoolPair(B& b, const Shape& s, DType dt, int64_t kernel) {
  const int64_t pad = kernel / 2 - (kernel % 2 == 0 ? 1 : 0);  // 2x2: 0, 3x3: 1
  const int64_t oh = (s[2] + 2 * pad - kernel) / 2 + 1, ow = (s[3] + 2 * pad - kernel) / 2 + 1;
  auto input = b.tensor(s, dt);
  b.op(kRelu, {b.tensor(s, dt)}, {input});
  auto window = [&] {
    return std::vector<core::Value>{B::intList({kernel, kernel}), B::intList({2, 2}),
                                    B::intList({pad, pad}), B::intList({1, 1}),
                                    B::boolValue(false)};
  };
  auto pool_args = [&] {
    std::vector<core::Value> args = {input};
    for (core::Value& v : window()) args.push_back(std::move(v));
    return args;
  };
  b.op(kMaxPool2d, pool_args(), {b.tensor({s[0], s[1], oh, ow}, dt)});
  auto indices = b.tensor({s[0], s[1], oh, ow}, DType::kInt64);
  b.op(kMaxPool, pool_args(), {b.tensor({s[0], s[1], oh, ow}, dt), indices});
  std::vector<core::Value> backward = {b.tensor({s[0], s[1], oh, ow}, dt), input};
  for (core::Value& v : window()) backward.push_back(std::move(v));
  backward.push_back(indices);
  b.op(kMaxPoolBackward, std::move(backward), {b.tensor(s, dt)});
}

MicrobenchCase reductionCase(const GridOptions& grid, const std::string& label, double bytes,
                             std::function<void(B&)> add) {
  return repeatedCase(grid, "reduction", label, estimateOpUs(0, 1, bytes), std::move(add));
}

}  // namespace

std::vector<MicrobenchCase> reductionCases(const GridOptions& grid) {
  std::vector<MicrobenchCase> cases;
  for (DType dt : grid.dtypes) {
    const double item = static_cast<double>(core::dtypeItemsize(dt));
    for (const Shape& s : withAccelerator(kMatrices, kAcceleratorMatrices, grid.accelerator)) {
      for (int64_t dim : {0, 1}) {
        for (const char* schema : {kSumDim, kMeanDim, kAmax}) {
          const std::string op = schema == kSumDim ? "sum" : schema == kMeanDim ? "mean" : "amax";
          cases.push_back(reductionCase(
              grid, fmt::format("{} [{}x{}] dim={} {}", op, s[0], s[1], dim, dtypeLabel(dt)),
              numel(s) * item, [=](B& b) { addMatrixReduction(b, schema, s, dim, dt); }));
        }
      }
    }
    for (const Shape& s : withAccelerator(kMaps, kAcceleratorMaps, grid.accelerator)) {
      const std::string shape = fmt::format("[{}x{}x{}x{}]", s[0], s[1], s[2], s[3]);
      if (s[2] >= 2) {
        cases.push_back(reductionCase(grid, fmt::format("max_pool2d {} {}", shape, dtypeLabel(dt)),
                                      3.5 * numel(s) * item,
                                      [=](B& b) { addPoolPair(b, s, dt, 2); }));
      }
      if (s[2] >= 4) {
        cases.push_back(
            reductionCase(grid, fmt::format("max_pool2d 3x3 pad 1 {} {}", shape, dtypeLabel(dt)),
                          6 * numel(s) * item, [=](B& b) { addPoolPair(b, s, dt, 3); }));
      }
      cases.push_back(reductionCase(grid,
                                    fmt::format("adaptive_avg_pool2d {} {}", shape, dtypeLabel(dt)),
                                    numel(s) * item, [=](B& b) {
                                      b.op(kAdaptiveAvg, {b.tensor(s, dt), B::intList({1, 1})},
                                           {b.tensor({s[0], s[1], 1, 1}, dt)});
                                    }));
    }
    for (int64_t n : kLogits) {
      cases.push_back(reductionCase(
          grid, fmt::format("binary_cross_entropy_with_logits [{}] {}", n, dtypeLabel(dt)),
          2.0 * n * item, [=](B& b) {
            b.op(kBceWithLogits,
                 {b.tensor({n}, dt), b.tensor({n}, dt), B::none(), B::none(), B::intValue(1)},
                 {b.tensor({}, dt)});
          }));
    }
  }
  return cases;
}

}  // namespace tracetwin::calibration
