// Convolution microbenchmarks: conv2d (what nn.Conv2d records) and the
// convolution_backward autograd runs for it, over N, C, K, H=W, filter size,
// stride, bias, and depthwise (groups = C). Both ops sit in one graph per
// grid point. The grid keeps to the layers CNNs are built of (K between C/4
// and 4C, feature maps no larger than a ResNet stem's, 7x7 only on 3-channel
// inputs), so the points a sweep samples land where real layers are.
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
const std::vector<int64_t> kDepthwiseFilter = {3, 5};
constexpr double kMaxFlops = 3e9;  // forward + backward ~ 0.1 s at ~30 GFLOP/s
// A GPU (GridOptions::accelerator) trains CNNs at batch 64-512: a ResNet-18
// layer at batch 128 and 96 px is ~2e10 FLOP.
const std::vector<int64_t> kAcceleratorBatch = {64, 128, 256};
constexpr double kAcceleratorMaxFlops = 3e11;
// One image's input map at most 64 x 56 x 56 (ResNet's first block; deeper
// layers trade pixels for channels), and K / C within [1/4, 4].
constexpr int64_t kMaxImageElems = 64 * 56 * 56;
constexpr int64_t kMaxChannelRatio = 4;

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
  int64_t groups = 1;  // C for depthwise
  int64_t out() const { return (hw + 2 * (r / 2) - r) / stride + 1; }
  double flops() const { return 2.0 * n * k * (c / groups) * r * r * out() * out(); }
};

void addConvPair(B& b, const ConvPoint& p, DType dt) {
  const int64_t pad = p.r / 2;
  const int64_t o = p.out();
  auto input = b.tensor({p.n, p.c, p.hw, p.hw}, dt);
  auto weight = b.tensor({p.k, p.c / p.groups, p.r, p.r}, dt);
  auto bias = p.bias ? b.tensor({p.k}, dt) : B::none();
  b.op(kConv2d,
       {input, weight, bias, B::intList({p.stride, p.stride}), B::intList({pad, pad}),
        B::intList({1, 1}), B::intValue(p.groups)},
       {b.tensor({p.n, p.k, o, o}, dt)});
  // The first layer of a network needs no input gradient (output_mask[0]).
  const bool input_grad = p.c != 3;
  b.op(kConvBackward,
       {b.tensor({p.n, p.k, o, o}, dt), input, weight, p.bias ? B::intList({p.k}) : B::none(),
        B::intList({p.stride, p.stride}), B::intList({pad, pad}), B::intList({1, 1}),
        B::boolValue(false), B::intList({0, 0}), B::intValue(p.groups),
        B::boolList({input_grad, true, p.bias})},
       {input_grad ? b.tensor({p.n, p.c, p.hw, p.hw}, dt) : b.undefinedTensor(),
        b.tensor({p.k, p.c / p.groups, p.r, p.r}, dt),
        p.bias ? b.tensor({p.k}, dt) : b.undefinedTensor()});
}

MicrobenchCase convCase(const GridOptions& grid, const ConvPoint& p, DType dt) {
  const double bytes =
      static_cast<double>(p.n * p.c * p.hw * p.hw + p.k * (p.c / p.groups) * p.r * p.r +
                          p.n * p.k * p.out() * p.out()) *
      core::dtypeItemsize(dt);
  // Backward does about twice the forward's work.
  return repeatedCase(grid, "conv",
                      fmt::format("conv2d n={} c={} k={} hw={} r={} s={}{}{} {}", p.n, p.c, p.k,
                                  p.hw, p.r, p.stride, p.groups > 1 ? " depthwise" : "",
                                  p.bias ? " bias" : "", dtypeLabel(dt)),
                      3.0 * estimateOpUs(p.flops(), kEstConvFlops, bytes),
                      [=](B& b) { addConvPair(b, p, dt); });
}

// The grid's largest weights (512 -> 512 channels, 3x3: 9.4 MB) at batch 1
// on 1-4 px maps, which LibTorch runs on its native im2col path. Its cost
// there is mostly packing the weight for BLAS (6.6 ms forward for any output
// of 1-4 pixels, 12.0 ms for 16), and trees cannot carry that beyond the
// weights they were fitted on: the 05:24 calibration sampled no
// such point, its largest native weight was 4.7 MB, and ResNet-18's layer 4
// at 96 px (3x3 maps) came out at 12.1 ms against 8.5 replayed.
bool isWeightAnchor(const ConvPoint& p) {
  return p.n == 1 && p.c == 512 && p.k == 512 && p.r == 3 && p.hw <= 4 && p.groups == 1;
}

}  // namespace

bool realisticLayer(int64_t c, int64_t k, int64_t hw) {
  if (c * hw * hw > kMaxImageElems) return false;
  if (c == 3) return true;  // stems: any width
  return k * kMaxChannelRatio >= c && k <= c * kMaxChannelRatio;
}

std::vector<MicrobenchCase> convCases(const GridOptions& grid) {
  std::vector<MicrobenchCase> cases;
  std::vector<int64_t> batches = kBatch;
  if (grid.accelerator)
    batches.insert(batches.end(), kAcceleratorBatch.begin(), kAcceleratorBatch.end());
  const double max_flops = grid.accelerator ? kAcceleratorMaxFlops : kMaxFlops;
  for (DType dt : grid.dtypes) {
    for (int64_t n : batches) {
      for (int64_t hw : kSpatial) {
        for (int64_t stride : {1, 2}) {
          for (int64_t c : kChannels) {
            for (int64_t k : kOutChannels) {
              if (!realisticLayer(c, k, hw)) continue;
              for (int64_t r : kFilter) {
                if (r > hw + 2 * (r / 2) || (r == 7 && c != 3)) continue;  // 7x7: stems only
                // Half the points carry a bias (convs before a batch norm do
                // not); alternating keeps both kinds on every axis.
                const bool bias = (n + c + k + hw + r + stride) % 2 == 0;
                ConvPoint p{n, c, k, hw, r, stride, bias};
                if (p.out() < 1 || p.flops() > max_flops) continue;
                cases.push_back(convCase(grid, p, dt));
                cases.back().anchor = isWeightAnchor(p);
              }
            }
            // Depthwise (MobileNet, EfficientNet): K = C, one filter per channel.
            for (int64_t r : kDepthwiseFilter) {
              if (c == 3 || r > hw + 2 * (r / 2) || c * hw * hw > kMaxImageElems) continue;
              ConvPoint p{n, c, c, hw, r, stride, false, c};
              if (p.out() >= 1 && p.flops() <= max_flops) cases.push_back(convCase(grid, p, dt));
            }
          }
        }
      }
    }
  }
  return cases;
}

}  // namespace tracetwin::calibration
