// Convolution microbenchmarks: conv2d (what nn.Conv2d records) and the
// convolution_backward autograd runs for it, over N, C, K, H=W, filter size,
// stride, bias, and depthwise (groups = C); and a sparser grid of
// conv_transpose2d with its backward. Both ops sit in one graph per grid
// point. The grid keeps to the layers CNNs are built of (K between C/4
// and 4C, feature maps no larger than a ResNet stem's, 7x7 only on 3-channel
// inputs), so the points a sweep samples land where real layers are.
#include <fmt/core.h>

#include <cstddef>
#include <initializer_list>

#include "calibration/graph_builder.h"
#include "calibration/microbench.h"

namespace tracetwin::calibration {
namespace {

using core::DType;
using B = GraphBuilder;

const std::vector<int64_t> kConvBatch = {1, 2, 4, 8, 16, 32};
const std::vector<int64_t> kConvChannels = {3, 16, 32, 64, 128, 256, 512};
const std::vector<int64_t> kOutChannels = {8, 16, 32, 64, 128, 256, 512};
const std::vector<int64_t> kConvSpatial = {1, 2, 4, 7, 8, 14, 16, 28, 32, 56};
const std::vector<int64_t> kFilter = {1, 3, 5, 7};
const std::vector<int64_t> kDepthwiseFilter = {3, 5};
constexpr double kConvMaxFlops = 3e9;  // forward + backward ~ 0.1 s at ~30 GFLOP/s
// A GPU (GridOptions::accelerator) trains CNNs at batch 64-512: a ResNet-18
// layer at batch 128 and 96 px is ~2e10 FLOP.
const std::vector<int64_t> kConvAcceleratorBatch = {64, 128, 256};
constexpr double kConvAcceleratorMaxFlops = 3e11;
// One image's input map at most 64 x 56 x 56 (ResNet's first block; deeper
// layers trade pixels for channels), and K / C within [1/4, 4].
constexpr int64_t kMaxImageElems = 64 * 56 * 56;
constexpr int64_t kMaxChannelRatio = 4;
// A GPU also runs the wide layers of ResNet-50 and its kin: 256-channel maps
// of 56 x 56 (four times the image above), stages of 1024 and 2048 channels,
// and stems on 112-224 px images. Without them an H100 calibration predicted
// ResNet-50's 1x1 layers at batch 32 2.8x too slow (54 us replayed).
const std::vector<int64_t> kConvAcceleratorChannels = {1024, 2048};
const std::vector<int64_t> kConvAcceleratorSpatial = {112, 224};
constexpr int64_t kAcceleratorMaxImageElems = 256 * 56 * 56;

constexpr const char* kConv2d =
    "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] "
    "padding=0, int[2] dilation=1, int groups=1) -> Tensor";
constexpr const char* kConvBackward =
    "aten::convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? "
    "bias_sizes, int[] stride, int[] padding, int[] dilation, bool transposed, int[] "
    "output_padding, int groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)";

constexpr const char* kConvTranspose2d =
    "aten::conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, int[2] "
    "stride=1, int[2] padding=0, int[2] output_padding=0, int groups=1, int[2] dilation=1) -> "
    "Tensor";

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

// Whether a grid point is a "black square": the sum of its positions on each
// axis is even, so moving one step along any axis flips it. The values
// themselves would not do: channels, batches and maps are mostly even, and
// (n + c + k + hw + r + stride) % 2 put a bias on every even-sized 1x1 or
// 3x3 convolution at stride 1 and on none at stride 2. An H200 calibration
// of 25,000 conv rows so had no unbiased stride-1 1x1 layer at batch 2 or
// more, and predicted resnet_1.1.0's (bias-free) 1x1 backward 2-3x too slow.
bool checkerboard(std::initializer_list<size_t> positions) {
  size_t sum = 0;
  for (size_t p : positions) sum += p;
  return sum % 2 == 0;
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

// Transposed convolutions (ConvTranspose2d: decoders, upsampling heads) and
// their backward. LibTorch 1.13 runs them on the CPU through
// slow_conv_transpose2d (im2col, BLAS, col2im), 10-20x a oneDNN layer of
// the same FLOPs: conv_ae's 8x8 -> 16x16 layer took 563 us. The filters and
// strides decoders use: 4x4 / 2 with padding 1 (doubles the map), 3x3 / 2
// with output_padding 1 (doubles it too), 3x3 / 1 (keeps it).
struct TransposedPoint {
  int64_t n, c, k, hw, r, stride, pad, output_padding;
  bool bias;
  int64_t out() const { return (hw - 1) * stride - 2 * pad + r + output_padding; }
  double flops() const { return 2.0 * n * hw * hw * c * k * r * r; }
};
const std::vector<int64_t> kTransposedChannels = {16, 32, 64, 128, 256};
const std::vector<int64_t> kTransposedSpatial = {4, 7, 8, 16, 32};
// A sparser grid than the forward one (about 4% of the conv points): its
// batches are {1, 4, 16} of the CPU's and the accelerator's own.
bool transposedBatch(int64_t n) { return n == 1 || n == 4 || n == 16 || n >= 64; }
constexpr int64_t kMaxTransposedOutElems = 64 * 64 * 64;  // one image's output map

void addTransposedPair(B& b, const TransposedPoint& p, DType dt) {
  const int64_t o = p.out();
  auto input = b.tensor({p.n, p.c, p.hw, p.hw}, dt);
  auto weight = b.tensor({p.c, p.k, p.r, p.r}, dt);
  auto bias = p.bias ? b.tensor({p.k}, dt) : B::none();
  b.op(kConvTranspose2d,
       {input, weight, bias, B::intList({p.stride, p.stride}), B::intList({p.pad, p.pad}),
        B::intList({p.output_padding, p.output_padding}), B::intValue(1), B::intList({1, 1})},
       {b.tensor({p.n, p.k, o, o}, dt)});
  b.op(kConvBackward,
       {b.tensor({p.n, p.k, o, o}, dt), input, weight, p.bias ? B::intList({p.k}) : B::none(),
        B::intList({p.stride, p.stride}), B::intList({p.pad, p.pad}), B::intList({1, 1}),
        B::boolValue(true), B::intList({p.output_padding, p.output_padding}), B::intValue(1),
        B::boolList({true, true, p.bias})},
       {b.tensor({p.n, p.c, p.hw, p.hw}, dt), b.tensor({p.c, p.k, p.r, p.r}, dt),
        p.bias ? b.tensor({p.k}, dt) : b.undefinedTensor()});
}

MicrobenchCase transposedCase(const GridOptions& grid, const TransposedPoint& p, DType dt) {
  const double bytes = static_cast<double>(p.n * p.c * p.hw * p.hw + p.c * p.k * p.r * p.r +
                                           p.n * p.k * p.out() * p.out()) *
                       core::dtypeItemsize(dt);
  // The native path runs at about the BLAS rate, not oneDNN's.
  return repeatedCase(
      grid, "conv",
      fmt::format("conv_transpose2d n={} c={} k={} hw={} r={} s={}{}{} {}", p.n, p.c, p.k, p.hw,
                  p.r, p.stride, p.output_padding > 0 ? " outpad" : "", p.bias ? " bias" : "",
                  dtypeLabel(dt)),
      3.0 * estimateOpUs(p.flops(), kEstGemmFlops, bytes),
      [=](B& b) { addTransposedPair(b, p, dt); });
}

void addTransposedCases(const GridOptions& grid, const std::vector<int64_t>& batches,
                        double max_flops, DType dt, std::vector<MicrobenchCase>* cases) {
  struct Filter {
    int64_t r, stride, pad, output_padding;
  };
  const Filter filters[] = {{4, 2, 1, 0}, {3, 2, 1, 1}, {3, 1, 1, 0}};
  for (size_t in = 0; in < batches.size(); ++in) {
    const int64_t n = batches[in];
    if (!transposedBatch(n)) continue;
    for (size_t ihw = 0; ihw < kTransposedSpatial.size(); ++ihw) {
      const int64_t hw = kTransposedSpatial[ihw];
      for (size_t ic = 0; ic < kTransposedChannels.size(); ++ic) {
        const int64_t c = kTransposedChannels[ic];
        // Halving the channels as the map doubles, keeping them, and an
        // image decoder's last layer (3 channels out).
        const int64_t outs[] = {c / 2, c, 3};
        for (size_t ik = 0; ik < 3; ++ik) {
          const int64_t k = outs[ik];
          if (k == 3 && c > 64) continue;
          for (size_t ifl = 0; ifl < 3; ++ifl) {
            const Filter f = filters[ifl];
            const bool bias = checkerboard({in, ihw, ic, ik, ifl});
            TransposedPoint p{n, c, k, hw, f.r, f.stride, f.pad, f.output_padding, bias};
            if (p.flops() > max_flops || c * hw * hw > kMaxImageElems ||
                p.k * p.out() * p.out() > kMaxTransposedOutElems)
              continue;
            cases->push_back(transposedCase(grid, p, dt));
          }
        }
      }
    }
  }
}

}  // namespace

bool realisticLayer(int64_t c, int64_t k, int64_t hw, int64_t max_image_elems) {
  if (c * hw * hw > max_image_elems) return false;
  if (c == 3) return true;  // stems: any width
  return k * kMaxChannelRatio >= c && k <= c * kMaxChannelRatio;
}

std::vector<MicrobenchCase> convCases(const GridOptions& grid) {
  std::vector<MicrobenchCase> cases;
  std::vector<int64_t> batches = kConvBatch;
  if (grid.accelerator)
    batches.insert(batches.end(), kConvAcceleratorBatch.begin(), kConvAcceleratorBatch.end());
  const double max_flops = grid.accelerator ? kConvAcceleratorMaxFlops : kConvMaxFlops;
  const int64_t max_image = grid.accelerator ? kAcceleratorMaxImageElems : kMaxImageElems;
  const std::vector<int64_t> spatial =
      withAccelerator(kConvSpatial, kConvAcceleratorSpatial, grid.accelerator);
  const std::vector<int64_t> channels =
      withAccelerator(kConvChannels, kConvAcceleratorChannels, grid.accelerator);
  const std::vector<int64_t> out_channels =
      withAccelerator(kOutChannels, kConvAcceleratorChannels, grid.accelerator);
  for (DType dt : grid.dtypes) {
    for (size_t in = 0; in < batches.size(); ++in) {
      const int64_t n = batches[in];
      for (size_t ihw = 0; ihw < spatial.size(); ++ihw) {
        const int64_t hw = spatial[ihw];
        for (int64_t stride : {1, 2}) {
          for (size_t ic = 0; ic < channels.size(); ++ic) {
            const int64_t c = channels[ic];
            for (size_t ik = 0; ik < out_channels.size(); ++ik) {
              const int64_t k = out_channels[ik];
              if (!realisticLayer(c, k, hw, max_image)) continue;
              for (size_t ir = 0; ir < kFilter.size(); ++ir) {
                const int64_t r = kFilter[ir];
                if (r > hw + 2 * (r / 2) || (r == 7 && c != 3)) continue;  // 7x7: stems only
                // Half the points carry a bias (convs before a batch norm do
                // not), on a checkerboard of the axes' positions.
                const bool bias = checkerboard({in, ihw, static_cast<size_t>(stride), ic, ik, ir});
                ConvPoint p{n, c, k, hw, r, stride, bias};
                if (p.out() < 1 || p.flops() > max_flops) continue;
                cases.push_back(convCase(grid, p, dt));
                cases.back().anchor = isWeightAnchor(p);
              }
            }
            // Depthwise (MobileNet, EfficientNet): K = C, one filter per channel.
            for (int64_t r : kDepthwiseFilter) {
              if (c == 3 || r > hw + 2 * (r / 2) || c * hw * hw > max_image) continue;
              ConvPoint p{n, c, c, hw, r, stride, false, c};
              if (p.out() >= 1 && p.flops() <= max_flops) cases.push_back(convCase(grid, p, dt));
            }
          }
        }
      }
    }
    addTransposedCases(grid, batches, max_flops, dt, &cases);
  }
  return cases;
}

}  // namespace tracetwin::calibration
