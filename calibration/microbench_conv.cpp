// Convolution microbenchmarks: conv2d (what nn.Conv2d records) and the
// convolution_backward autograd runs for it, over N, C, K, H=W, filter size,
// stride, with and without bias. Both ops sit in one graph per grid point.
#include <fmt/core.h>

#include "calibration/graph_builder.h"
#include "calibration/microbench.h"

namespace tracetwin::calibration {
namespace {

using core::DType;
using B = GraphBuilder;

const std::vector<int64_t> kBatch = {1, 2, 4, 8, 16, 32};
const std::vector<int64_t> kChannels = {3, 16, 32, 64, 128, 256, 512};
const std::vector<int64_t> kOutChannels = {8, 16, 32, 64, 128, 256, 512};
const std::vector<int64_t> kSpatial = {1, 2, 4, 7, 8, 14, 16, 28, 32, 56};
const std::vector<int64_t> kFilter = {1, 3, 5, 7};
constexpr double kMaxFlops = 3e9;  // forward + backward ~ 0.1 s at ~30 GFLOP/s

constexpr const char* kConv2d =
    "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] "
    "padding=0, int[2] dilation=1, int groups=1) -> Tensor";
constexpr const char* kConvBackward =
    "aten::convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? "
    "bias_sizes, int[] stride, int[] padding, int[] dilation, bool transposed, int[] "
    "output_padding, int groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)";

struct ConvPoint {
  int64_t n, c, k, hw, r, stride;
  bool bias;
  int64_t out() const { return (hw + 2 * (r / 2) - r) / stride + 1; }
  double flops() const { return 2.0 * n * k * c * r * r * out() * out(); }
};

void addConvPair(B& b, const ConvPoint& p, DType dt) {
  const int64_t pad = p.r / 2;
  const int64_t o = p.out();
  auto input = b.tensor({p.n, p.c, p.hw, p.hw}, dt);
  auto weight = b.tensor({p.k, p.c, p.r, p.r}, dt);
  auto bias = p.bias ? b.tensor({p.k}, dt) : B::none();
  b.op(kConv2d,
       {input, weight, bias, B::intList({p.stride, p.stride}), B::intList({pad, pad}),
        B::intList({1, 1}), B::intValue(1)},
       {b.tensor({p.n, p.k, o, o}, dt)});
  // The first layer of a network needs no input gradient (output_mask[0]).
  const bool input_grad = p.c != 3;
  b.op(kConvBackward,
       {b.tensor({p.n, p.k, o, o}, dt), input, weight, p.bias ? B::intList({p.k}) : B::none(),
        B::intList({p.stride, p.stride}), B::intList({pad, pad}), B::intList({1, 1}),
        B::boolValue(false), B::intList({0, 0}), B::intValue(1),
        B::boolList({input_grad, true, p.bias})},
       {input_grad ? b.tensor({p.n, p.c, p.hw, p.hw}, dt) : b.undefinedTensor(),
        b.tensor({p.k, p.c, p.r, p.r}, dt), p.bias ? b.tensor({p.k}, dt) : b.undefinedTensor()});
}

MicrobenchCase convCase(const GridOptions& grid, const ConvPoint& p, DType dt) {
  const double bytes = static_cast<double>(p.n * p.c * p.hw * p.hw + p.k * p.c * p.r * p.r +
                                           p.n * p.k * p.out() * p.out()) *
                       core::dtypeItemsize(dt);
  // Backward does about twice the forward's work.
  return repeatedCase(grid, "conv",
                      fmt::format("conv2d n={} c={} k={} hw={} r={} s={}{} {}", p.n, p.c, p.k, p.hw,
                                  p.r, p.stride, p.bias ? " bias" : "", dtypeLabel(dt)),
                      3.0 * estimateOpUs(p.flops(), kEstConvFlops, bytes),
                      [=](B& b) { addConvPair(b, p, dt); });
}

}  // namespace

std::vector<MicrobenchCase> convCases(const GridOptions& grid) {
  std::vector<MicrobenchCase> cases;
  for (DType dt : grid.dtypes) {
    for (int64_t n : kBatch) {
      for (int64_t c : kChannels) {
        for (int64_t k : kOutChannels) {
          for (int64_t hw : kSpatial) {
            for (int64_t r : kFilter) {
              if (r > hw + 2 * (r / 2) || (r == 7 && c != 3)) continue;  // 7x7: stems only
              for (int64_t stride : {1, 2}) {
                for (bool bias : {false, true}) {
                  ConvPoint p{n, c, k, hw, r, stride, bias};
                  if (p.out() < 1 || p.flops() > kMaxFlops) continue;
                  cases.push_back(convCase(grid, p, dt));
                }
              }
            }
          }
        }
      }
    }
  }
  return cases;
}

}  // namespace tracetwin::calibration
