// Elementwise microbenchmarks: the activations, arithmetic and optimizer
// updates the bundled training steps spend their op count on (SGD/Adam's
// add_/mul_/addcmul_/addcdiv_/sqrt/div and zero_), over tensor sizes from
// one element (launch/dispatch-bound) to 4 Mi elements (bandwidth-bound),
// and the nll part of cross-entropy's backward, a fill of its gradient.
#include <fmt/core.h>

#include <functional>

#include "calibration/graph_builder.h"
#include "calibration/microbench.h"
#include "core/aten_schemas.h"

namespace tracetwin::calibration {
namespace {

using core::DType;
using core::Value;
using B = GraphBuilder;
using Shape = std::vector<int64_t>;

const std::vector<int64_t> kNumel = {1,     10,    100,    300,    1000,    4096,    10000,  16384,
                                     50000, 65536, 200000, 262144, 1048576, 2097152, 4194304};
// A GPU's DRAM rate shows past its 50-60 MB L2: ResNet-50 at batch 32 adds
// 25.7 M-element maps (308 MB per add_), which an H200 ran at 4.3 TB/s while
// a grid that stopped at 16 MB predicted that add_ at 1.1 TB/s.
const std::vector<int64_t> kAcceleratorNumel = {16777216, 67108864};

struct ElementwiseOp {
  const char* label;
  int tensors_touched;  // tensors read + written, for the cost estimate
  std::function<void(B&, const Shape&, DType)> add;
};

Value same(B& b, const Shape& s, DType dt) { return b.tensor(s, dt); }

// The backward of cross_entropy_loss's nll part, which autograd records on its
// own: it zero-fills the [batch, classes] gradient and writes one value per
// row, a fill like zero_ (core/op_family.cpp files it with the elementwise
// ops; among the reductions, whose curve is the pooling ops', its held-out
// points came out 167% off).
constexpr const char* kNllLossBackward =
    "aten::nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int "
    "reduction, int ignore_index, Tensor total_weight) -> Tensor";
// [batch, classes] of classifier heads and language-model outputs.
const std::vector<Shape> kLogitMatrices = {{32, 10},    {128, 10},   {512, 1000}, {64, 1000},
                                           {2048, 100}, {256, 8192}, {4096, 32},  {8, 50000}};

// 0-dim double tensor: how Python scalars (lr, momentum) reach SGD's mul_/add_.
Value scalarTensor(B& b) { return b.tensor({}, DType::kFloat64); }

const std::vector<ElementwiseOp>& ops() {
  static const std::vector<ElementwiseOp> table = {
      {"add", 3,
       [](B& b, const Shape& s, DType dt) {
         b.op("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
              {same(b, s, dt), same(b, s, dt), B::intValue(1)}, {same(b, s, dt)});
       }},
      {"add_", 3,
       [](B& b, const Shape& s, DType dt) {
         auto self = same(b, s, dt);
         b.op("aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
              {self, same(b, s, dt), B::intValue(1)}, {self});
       }},
      // x.add_(1) from Python: the scalar arrives as a 0-dim long tensor and
      // the op takes the type-promoting path (~2 us vs ~0.6 us for floats).
      {"add_long_scalar_tensor_", 2,
       [](B& b, const Shape& s, DType dt) {
         auto self = same(b, s, dt);
         b.op("aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
              {self, b.tensor({}, DType::kInt64), B::intValue(1)}, {self});
       }},
      {"mul_scalar_tensor_", 2,
       [](B& b, const Shape& s, DType dt) {
         auto self = same(b, s, dt);
         b.op("aten::mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
              {self, scalarTensor(b)}, {self});
       }},
      {"mul", 3,
       [](B& b, const Shape& s, DType dt) {
         b.op("aten::mul.Tensor(Tensor self, Tensor other) -> Tensor",
              {same(b, s, dt), same(b, s, dt)}, {same(b, s, dt)});
       }},
      {"div_scalar", 2,
       [](B& b, const Shape& s, DType dt) {
         b.op("aten::div.Scalar(Tensor self, Scalar other) -> Tensor",
              {same(b, s, dt), B::intValue(3)}, {same(b, s, dt)});
       }},
      {"relu", 2,
       [](B& b, const Shape& s, DType dt) {
         b.op(core::schemas::kRelu, {same(b, s, dt)}, {same(b, s, dt)});
       }},
      {"relu_", 2,
       [](B& b, const Shape& s, DType dt) {
         auto self = same(b, s, dt);
         b.op("aten::relu_(Tensor(a!) self) -> Tensor(a!)", {self}, {self});
       }},
      {"gelu", 2,
       [](B& b, const Shape& s, DType dt) {
         b.op("aten::gelu(Tensor self, *, str approximate=\"none\") -> Tensor",
              {same(b, s, dt), B::stringValue("none")}, {same(b, s, dt)});
       }},
      {"sigmoid", 2,
       [](B& b, const Shape& s, DType dt) {
         b.op("aten::sigmoid(Tensor self) -> Tensor", {same(b, s, dt)}, {same(b, s, dt)});
       }},
      {"tanh", 2,
       [](B& b, const Shape& s, DType dt) {
         b.op("aten::tanh(Tensor self) -> Tensor", {same(b, s, dt)}, {same(b, s, dt)});
       }},
      {"sqrt", 2,
       [](B& b, const Shape& s, DType dt) {
         b.op("aten::sqrt(Tensor self) -> Tensor", {same(b, s, dt)}, {same(b, s, dt)});
       }},
      {"threshold_backward", 3,
       [](B& b, const Shape& s, DType dt) {
         b.op(
             "aten::threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> "
             "Tensor",
             {same(b, s, dt), same(b, s, dt), B::intValue(0)}, {same(b, s, dt)});
       }},
      // Backward of the activations above, and MobileNetV3's hard
      // activations: 0.5-1% of an LSTM's or a MobileNet's step, which the
      // elementwise trees guessed from other ops' kernels while these were
      // on no grid.
      {"sigmoid_backward", 3,
       [](B& b, const Shape& s, DType dt) {
         b.op("aten::sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor",
              {same(b, s, dt), same(b, s, dt)}, {same(b, s, dt)});
       }},
      {"tanh_backward", 3,
       [](B& b, const Shape& s, DType dt) {
         b.op("aten::tanh_backward(Tensor grad_output, Tensor output) -> Tensor",
              {same(b, s, dt), same(b, s, dt)}, {same(b, s, dt)});
       }},
      {"hardswish", 2,
       [](B& b, const Shape& s, DType dt) {
         b.op("aten::hardswish(Tensor self) -> Tensor", {same(b, s, dt)}, {same(b, s, dt)});
       }},
      {"hardswish_", 2,
       [](B& b, const Shape& s, DType dt) {
         auto self = same(b, s, dt);
         b.op("aten::hardswish_(Tensor(a!) self) -> Tensor(a!)", {self}, {self});
       }},
      {"hardswish_backward", 3,
       [](B& b, const Shape& s, DType dt) {
         b.op("aten::hardswish_backward(Tensor grad_output, Tensor self) -> Tensor",
              {same(b, s, dt), same(b, s, dt)}, {same(b, s, dt)});
       }},
      {"hardsigmoid", 2,
       [](B& b, const Shape& s, DType dt) {
         b.op("aten::hardsigmoid(Tensor self) -> Tensor", {same(b, s, dt)}, {same(b, s, dt)});
       }},
      {"hardsigmoid_backward", 3,
       [](B& b, const Shape& s, DType dt) {
         b.op("aten::hardsigmoid_backward(Tensor grad_output, Tensor self) -> Tensor",
              {same(b, s, dt), same(b, s, dt)}, {same(b, s, dt)});
       }},
      {"zero_", 1,
       [](B& b, const Shape& s, DType dt) {
         auto self = same(b, s, dt);
         b.op("aten::zero_(Tensor(a!) self) -> Tensor(a!)", {self}, {self});
       }},
      {"addcmul_", 4,
       [](B& b, const Shape& s, DType dt) {
         auto self = same(b, s, dt);
         b.op(
             "aten::addcmul_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) "
             "-> Tensor(a!)",
             {self, same(b, s, dt), same(b, s, dt), B::doubleValue(0.001)}, {self});
       }},
      {"addcdiv_", 4,
       [](B& b, const Shape& s, DType dt) {
         auto self = same(b, s, dt);
         b.op(
             "aten::addcdiv_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) "
             "-> Tensor(a!)",
             {self, same(b, s, dt), same(b, s, dt), B::doubleValue(-0.001)}, {self});
       }},
      {"dropout", 3,
       [](B& b, const Shape& s, DType dt) {
         b.op("aten::dropout(Tensor input, float p, bool train) -> Tensor",
              {same(b, s, dt), B::doubleValue(0.1), B::boolValue(true)}, {same(b, s, dt)});
       }},
      // p = 0 (a model configured without dropout): returns its input.
      {"dropout_p0", 1,
       [](B& b, const Shape& s, DType dt) {
         b.op("aten::dropout(Tensor input, float p, bool train) -> Tensor",
              {same(b, s, dt), B::doubleValue(0.0), B::boolValue(true)}, {same(b, s, dt)});
       }},
      {"ones_like", 1,
       [](B& b, const Shape& s, DType dt) {
         b.op(
             "aten::ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, "
             "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> "
             "Tensor",
             {same(b, s, dt), B::none(), B::none(), B::none(), B::none(), B::none()},
             {same(b, s, dt)});
       }},
  };
  return table;
}

// Broadcasting operands, which TensorIterator walks with a zero stride:
// squeeze-and-excitation scales ([N, C, H, W] * [N, C, 1, 1]; MobileNetV3's
// 28 `mul`s per step measured 2.4x what the same-shape grid predicted) and
// bias adds ([rows, cols] + [cols]). Alone, on this host, they ran at about
// the same-shape speed per byte (mul [4x16x56x56] by [4x16x1x1]: 51-58 us
// against 99-124 us for 200,000 same-shape elements, which move 1.5x the
// bytes): the grid covers them, the residual decides.
const std::vector<Shape> kBroadcastMaps = {{1, 16, 56, 56},  {4, 16, 56, 56}, {4, 72, 28, 28},
                                           {4, 120, 14, 14}, {4, 576, 7, 7},  {8, 960, 4, 4},
                                           {2, 64, 2, 2},    {16, 256, 8, 8}};
const std::vector<Shape> kBiasMatrices = {{32, 64}, {256, 512}, {1024, 128}, {4096, 1024}, {8, 10}};

void addBroadcast(B& b, const char* schema, const Shape& big, const Shape& small, DType dt,
                  bool with_alpha) {
  std::vector<Value> in = {b.tensor(big, dt), b.tensor(small, dt)};
  if (with_alpha) in.push_back(B::intValue(1));
  b.op(schema, std::move(in), {b.tensor(big, dt)});
}

MicrobenchCase elementwiseCase(const GridOptions& grid, const ElementwiseOp& op, int64_t numel,
                               DType dt) {
  const double bytes = static_cast<double>(numel * op.tensors_touched * core::dtypeItemsize(dt));
  const Shape shape = matrixShape(numel);
  return repeatedCase(grid, "elementwise",
                      fmt::format("{} numel={} {}", op.label, numel, dtypeLabel(dt)),
                      estimateOpUs(0, 1, bytes), [=, add = op.add](B& b) { add(b, shape, dt); });
}

}  // namespace

std::vector<MicrobenchCase> elementwiseCases(const GridOptions& grid) {
  std::vector<MicrobenchCase> cases;
  for (DType dt : grid.dtypes) {
    for (const ElementwiseOp& op : ops()) {
      for (int64_t numel : withAccelerator(kNumel, kAcceleratorNumel, grid.accelerator))
        cases.push_back(elementwiseCase(grid, op, numel, dt));
    }
    constexpr const char* kMul = "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor";
    constexpr const char* kAdd =
        "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";
    const double item = static_cast<double>(core::dtypeItemsize(dt));
    for (const Shape& m : kBroadcastMaps) {
      const Shape scale = {m[0], m[1], 1, 1};
      const double bytes = 2.0 * static_cast<double>(m[0] * m[1] * m[2] * m[3]) * item;
      for (const bool is_mul : {true, false}) {
        cases.push_back(repeatedCase(
            grid, "elementwise",
            fmt::format("{} [{}x{}x{}x{}] by [{}x{}x1x1] {}", is_mul ? "mul" : "add", m[0], m[1],
                        m[2], m[3], m[0], m[1], dtypeLabel(dt)),
            estimateOpUs(0, 1, bytes),
            [=](B& b) { addBroadcast(b, is_mul ? kMul : kAdd, m, scale, dt, !is_mul); }));
      }
    }
    for (const Shape& m : kBiasMatrices) {
      const double bytes = 2.0 * static_cast<double>(m[0] * m[1]) * item;
      cases.push_back(repeatedCase(
          grid, "elementwise",
          fmt::format("add [{}x{}] by [{}] {}", m[0], m[1], m[1], dtypeLabel(dt)),
          estimateOpUs(0, 1, bytes), [=](B& b) { addBroadcast(b, kAdd, m, {m[1]}, dt, true); }));
    }
    for (const Shape& s : kLogitMatrices) {
      const double bytes = static_cast<double>(s[0] * s[1]) * item;
      cases.push_back(
          repeatedCase(grid, "elementwise",
                       fmt::format("nll_loss_backward [{}x{}] {}", s[0], s[1], dtypeLabel(dt)),
                       estimateOpUs(0, 1, bytes), [=](B& b) {
                         b.op(kNllLossBackward,
                              {b.tensor({}, dt), b.tensor(s, dt), b.tensor({s[0]}, DType::kInt64),
                               B::none(), B::intValue(1), B::intValue(-100), b.tensor({}, dt)},
                              {b.tensor(s, dt)});
                       }));
    }
  }
  return cases;
}

}  // namespace tracetwin::calibration
