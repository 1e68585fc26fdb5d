// Normalisation microbenchmarks: batch_norm (training mode, what nn.BatchNorm2d
// records) with native_batch_norm_backward (and, on a GPU, with cuDNN's
// backward, which autograd records there), and layer_norm with
// native_layer_norm_backward, over feature-map and token-matrix shapes.
#include <fmt/core.h>

#include <functional>

#include "calibration/graph_builder.h"
#include "calibration/microbench.h"

namespace tracetwin::calibration {
namespace {

using core::DType;
using B = GraphBuilder;
using Shape = std::vector<int64_t>;

const std::vector<int64_t> kNormBatch = {1, 2, 4, 8, 16, 32};
// 128 channels at 28 px is ResNet's second stage. Without it the nearest
// points had 64 or 256 channels on other maps: on an H200 the 16- and
// 64-channel maps of 1-4 M elements ran at 0.3-1.0 TB/s, resnet_1.1.0's
// batch_norm [32, 128, 28, 28] at 2.3, and the trees put it at 25.6 us
// against 11.2 replayed.
const std::vector<int64_t> kChannels = {16, 64, 128, 256, 512};
// Maps whose plane is not a multiple of 8 elements (2, 3, 7, 14 px: the last
// stages of CNNs on small and ImageNet-sized images) take a slower per-row
// path in LibTorch's CPU batch-norm backward; powers of two alone missed it.
const std::vector<int64_t> kSpatial = {1, 2, 3, 4, 7, 8, 14, 16, 28, 32, 56};
const std::vector<int64_t> kTokens = {1, 32, 128, 512, 2048, 8192};
const std::vector<int64_t> kHidden = {64, 128, 256, 768, 1024, 4096};
constexpr int64_t kMaxNumel = int64_t{1} << 23;
// A GPU (GridOptions::accelerator) normalises the maps of CNNs trained at
// batch 32-256: ResNet-50's stem output at batch 32 is 32 x 64 x 112 x 112
// (25.7 M elements), its last stage 2048 channels. The CPU-sized grid above
// stops at 8 M elements and 512 channels; from it an H100 calibration
// predicted resnet_1.1.0's batch norms +98% over their replay (per op up to
// 6.1x: batch_norm [32, 256, 28, 28] 126 us against 20.5).
const std::vector<int64_t> kAcceleratorBatch = {64, 128, 256};
const std::vector<int64_t> kAcceleratorChannels = {1024, 2048};
const std::vector<int64_t> kAcceleratorSpatial = {112};
const std::vector<int64_t> kAcceleratorTokens = {32768};
constexpr int64_t kAcceleratorMaxNumel = int64_t{1} << 27;

constexpr const char* kBatchNorm =
    "aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? "
    "running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor";
constexpr const char* kBatchNormBackward =
    "aten::native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? "
    "running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, "
    "float eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)";
// What autograd records for a batch norm that ran on cuDNN. Its reserve space
// is empty for a plain batch norm (no fused activation), as traces record it.
constexpr const char* kCudnnBatchNormBackward =
    "aten::cudnn_batch_norm_backward(Tensor input, Tensor grad_output, Tensor weight, Tensor? "
    "running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_var, float epsilon, "
    "Tensor reserveSpace) -> (Tensor, Tensor, Tensor)";
constexpr const char* kLayerNorm =
    "aten::layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? "
    "bias=None, float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor";
constexpr const char* kLayerNormBackward =
    "aten::native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, "
    "Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, "
    "Tensor, Tensor)";

// Half and bfloat16 batch norm runs as mixed precision: the per-channel
// weight, bias, running and saved statistics stay float32, as nn.BatchNorm2d
// under autocast records them (CUDA's kernels refuse anything else).
DType channelStatsType(DType dt) {
  return dt == DType::kFloat16 || dt == DType::kBFloat16 ? DType::kFloat32 : dt;
}

void addBatchNormPair(B& b, const Shape& s, DType dt, bool cudnn_backward) {
  const Shape c = {s[1]};
  const DType st = channelStatsType(dt);
  auto input = b.tensor(s, dt);
  auto weight = b.tensor(c, st);
  auto mean = b.tensor(c, st);
  auto var = b.tensor(c, st);
  b.op(kBatchNorm,
       {input, weight, b.tensor(c, st), mean, var, B::boolValue(true), B::doubleValue(0.1),
        B::doubleValue(1e-5), B::boolValue(true)},
       {b.tensor(s, dt)});
  if (cudnn_backward) {
    b.op(kCudnnBatchNormBackward,
         {input, b.tensor(s, dt), weight, mean, var, b.tensor(c, st), b.tensor(c, st),
          B::doubleValue(1e-5), b.tensor({0}, DType::kUInt8)},
         {b.tensor(s, dt), b.tensor(c, st), b.tensor(c, st)});
    return;
  }
  b.op(kBatchNormBackward,
       {b.tensor(s, dt), input, weight, mean, var, b.tensor(c, st), b.tensor(c, st),
        B::boolValue(true), B::doubleValue(1e-5), B::boolList({true, true, true})},
       {b.tensor(s, dt), b.tensor(c, st), b.tensor(c, st)});
}

// The saved mean and rstd: float32 for half inputs on CUDA; LibTorch 1.13's
// CPU kernel keeps them in the input's dtype (its backward refuses float32
// statistics of a bfloat16 input).
void addLayerNormPair(B& b, int64_t tokens, int64_t hidden, DType dt, bool accelerator) {
  const Shape s = {tokens, hidden}, h = {hidden}, stat = {tokens, 1};
  const DType stat_dt = accelerator ? channelStatsType(dt) : dt;
  auto input = b.tensor(s, dt);
  auto weight = b.tensor(h, dt);
  auto bias = b.tensor(h, dt);
  b.op(kLayerNorm,
       {input, B::intList({hidden}), weight, bias, B::doubleValue(1e-5), B::boolValue(true)},
       {b.tensor(s, dt)});
  b.op(kLayerNormBackward,
       {b.tensor(s, dt), input, B::intList({hidden}), b.tensor(stat, stat_dt),
        b.tensor(stat, stat_dt), weight, bias, B::boolList({true, true, true})},
       {b.tensor(s, dt), b.tensor(h, dt), b.tensor(h, dt)});
}

MicrobenchCase normCase(const GridOptions& grid, const std::string& label, double bytes,
                        std::function<void(B&)> add) {
  // Forward reads twice (statistics, then normalise); backward ~3 passes.
  return repeatedCase(grid, "norm", label, 2 * estimateOpUs(0, 1, 3 * bytes), std::move(add));
}

}  // namespace

std::vector<MicrobenchCase> normCases(const GridOptions& grid) {
  std::vector<MicrobenchCase> cases;
  const bool big = grid.accelerator;
  const std::vector<int64_t> batches = withAccelerator(kNormBatch, kAcceleratorBatch, big);
  const std::vector<int64_t> channels = withAccelerator(kChannels, kAcceleratorChannels, big);
  const std::vector<int64_t> spatial = withAccelerator(kSpatial, kAcceleratorSpatial, big);
  const int64_t max_numel = big ? kAcceleratorMaxNumel : kMaxNumel;
  size_t batch_norm_points = 0;
  for (DType dt : grid.dtypes) {
    const double item = static_cast<double>(core::dtypeItemsize(dt));
    for (int64_t n : batches) {
      for (int64_t c : channels) {
        for (int64_t hw : spatial) {
          const Shape s = {n, c, hw, hw};
          if (n * c * hw * hw > max_numel) continue;
          // On a GPU every other float32 point runs cuDNN's backward;
          // alternating keeps both on every axis. cuDNN's backward refuses
          // half-precision maps with float32 statistics (autocast runs batch
          // norms in float32 anyway).
          const bool cudnn = big && dt == DType::kFloat32 && batch_norm_points++ % 2 == 1;
          cases.push_back(normCase(grid,
                                   fmt::format("batch_norm [{}x{}x{}x{}]{} {}", n, c, hw, hw,
                                               cudnn ? " cudnn" : "", dtypeLabel(dt)),
                                   static_cast<double>(n * c * hw * hw) * item,
                                   [=](B& b) { addBatchNormPair(b, s, dt, cudnn); }));
        }
      }
    }
    for (int64_t t : withAccelerator(kTokens, kAcceleratorTokens, big)) {
      for (int64_t h : kHidden) {
        if (t * h > max_numel) continue;
        cases.push_back(normCase(grid, fmt::format("layer_norm [{}x{}] {}", t, h, dtypeLabel(dt)),
                                 static_cast<double>(t * h) * item,
                                 [=](B& b) { addLayerNormPair(b, t, h, dt, big); }));
      }
    }
  }
  return cases;
}

}  // namespace tracetwin::calibration
