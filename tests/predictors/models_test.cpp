// Formulas of the analytic models, checked against hand-computed numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "core/errors.h"
#include "predictors/comm/comm_model.h"
#include "predictors/kernels/analytic_models.h"
#include "predictors/kernels/cross_device.h"
#include "predictors/kernels/feature_shapes.h"
#include "predictors/kernels/features.h"
#include "predictors/models/analytic_fit.h"
#include "tests/support/graphs.h"

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;

DeviceSpec gpu(double tflops, double gbps, int64_t sms, double mhz) {
  DeviceSpec d;
  d.name = "g";
  d.peak_flops = {{"float32", tflops * 1e12}, {"bfloat16", tflops * 1e12}};
  d.memory_bandwidth = gbps * 1e9;
  d.compute_units = sms;
  d.clock_hz = mhz * 1e6;
  return d;
}

TEST(GemmFeatures, AddmmUsesMat1AndMat2) {
  core::Node n = opNode("aten::addmm", {tensor({64}), tensor({128, 256}), tensor({256, 64})},
                        {tensor({128, 64})});
  OpFeatures f = computeFeatures(n);
  EXPECT_EQ(f.family, "gemm");
  EXPECT_DOUBLE_EQ(f.flops, 2.0 * 128 * 64 * 256);
  EXPECT_DOUBLE_EQ(f.bytes, (128.0 * 256 + 256 * 64 + 128 * 64) * 4);
  ASSERT_EQ(f.x.size(), featureCount("gemm"));
  EXPECT_FLOAT_EQ(f.x[0], 7.0f);  // log2 M
}

// Batch-norm backward of [4, 576, 2, 2] and [4, 576, 4, 4] were 250 and 35 us
// on the build host: the rows (N x C planes), their length and whether that is
// a multiple of 8 must reach the booster; bytes alone cannot tell them apart.
TEST(NormFeatures, RowsRowLengthAndAlignment) {
  const std::vector<std::string> bn_args = {"grad_out", "input", "weight"};
  core::Node small = opNode("aten::native_batch_norm_backward",
                            {tensor({4, 576, 2, 2}), tensor({4, 576, 2, 2}), tensor({576})},
                            {tensor({4, 576, 2, 2})}, bn_args);
  OpFeatures f = computeFeatures(small);
  EXPECT_EQ(f.family, "norm");
  ASSERT_EQ(f.x.size(), featureCount("norm"));
  EXPECT_FLOAT_EQ(f.x[2], std::log2(4.0f * 576));  // rows
  EXPECT_FLOAT_EQ(f.x[3], 2.0f);                   // log2 of a 4-element row
  EXPECT_FLOAT_EQ(f.x[4], 0.0f);                   // not a multiple of 8
  EXPECT_FLOAT_EQ(f.x[5], 1.0f);                   // batch norm, backward
  core::Node wide = opNode("aten::native_batch_norm_backward",
                           {tensor({4, 576, 4, 4}), tensor({4, 576, 4, 4}), tensor({576})},
                           {tensor({4, 576, 4, 4})}, bn_args);
  EXPECT_FLOAT_EQ(computeFeatures(wide).x[4], 1.0f);
  // Layer norm: the rows are the tokens, the row the normalized shape.
  core::Node ln = opNode("aten::layer_norm", {tensor({8, 128, 768}), intList({768})},
                         {tensor({8, 128, 768})}, {"input", "normalized_shape"});
  OpFeatures g = computeFeatures(ln);
  EXPECT_FLOAT_EQ(g.x[2], std::log2(8.0f * 128));
  EXPECT_FLOAT_EQ(g.x[3], std::log2(768.0f));
  EXPECT_FLOAT_EQ(g.x[5], 2.0f);  // layer norm, forward
  EXPECT_FLOAT_EQ(g.x[6], std::log2(8.0f * 128));  // a statistic per row
  EXPECT_FLOAT_EQ(g.x[7], std::log2(768.0f));      // over the row
}

// An H100 ran batch norms of [128, 16, 56, 56] at 204 us and [32, 64, 56, 56]
// at 54 us: the same rows and planes, but a quarter of the channels (the
// statistics a GPU spreads its work over) and 4x the elements behind each.
TEST(NormFeatures, StatisticsAndTheirLengthTellChannelsFromBatch) {
  const std::vector<std::string> args = {"input", "weight"};
  const OpFeatures few =
      computeFeatures(opNode("aten::batch_norm", {tensor({128, 16, 56, 56}), tensor({16})},
                             {tensor({128, 16, 56, 56})}, args));
  const OpFeatures many =
      computeFeatures(opNode("aten::batch_norm", {tensor({32, 64, 56, 56}), tensor({64})},
                             {tensor({32, 64, 56, 56})}, args));
  ASSERT_EQ(few.x.size(), featureCount("norm"));
  for (size_t i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(few.x[i], many.x[i]) << "column " << i;
  EXPECT_FLOAT_EQ(few.x[6], 4.0f);  // 16 channels
  EXPECT_FLOAT_EQ(many.x[6], 6.0f);
  EXPECT_FLOAT_EQ(few.x[7], std::log2(128.0f * 56 * 56));
  EXPECT_FLOAT_EQ(many.x[7], std::log2(32.0f * 56 * 56));
  // cuDNN's backward names its map "input" too.
  const OpFeatures bw =
      computeFeatures(opNode("aten::cudnn_batch_norm_backward",
                             {tensor({32, 64, 56, 56}), tensor({32, 64, 56, 56}), tensor({64})},
                             {tensor({32, 64, 56, 56})}, {"input", "grad_output", "weight"}));
  EXPECT_FLOAT_EQ(bw.x[6], 6.0f);
}

TEST(GemmFeatures, LinearFoldsLeadingDimsAndBmmHasBatch) {
  core::Node lin =
      opNode("aten::linear", {tensor({4, 32, 512}), tensor({1024, 512})}, {tensor({4, 32, 1024})});
  EXPECT_DOUBLE_EQ(computeFeatures(lin).flops, 2.0 * 128 * 1024 * 512);
  core::Node bmm =
      opNode("aten::bmm", {tensor({8, 64, 32}), tensor({8, 32, 16})}, {tensor({8, 64, 16})});
  EXPECT_DOUBLE_EQ(computeFeatures(bmm).flops, 2.0 * 8 * 64 * 16 * 32);
}

TEST(ConvFeatures, OutputSizeFromStridePaddingDilation) {
  core::Node n =
      opNode("aten::convolution",
             {tensor({32, 64, 56, 56}), tensor({128, 64, 3, 3}), tensor({128}), intList({2, 2}),
              intList({1, 1}), intList({1, 1}), intValue(0), intList({0, 0}), intValue(1)},
             {tensor({32, 128, 28, 28})},
             {"input", "weight", "bias", "stride", "padding", "dilation", "transposed",
              "output_padding", "groups"});
  OpFeatures f = computeFeatures(n);
  EXPECT_EQ(f.family, "conv");
  // (56 + 2 - 2 - 1) / 2 + 1 = 28
  EXPECT_DOUBLE_EQ(f.flops, 2.0 * 32 * 128 * 28 * 28 * 64 * 9);
}

// LibTorch 1.13's CPU path choice with one thread: native kernels for
// unstrided 1x1 filters below batch 16 and for batch 1 with small maps.
constexpr size_t kNativePathColumn = 12;

// ResNet-18's last 3x3 layer at batch 2 on a 1x1 map is the GEMM
// [512 x 4608] x [4608 x 2]: the columns after the path flag say so.
TEST(ConvFeatures, DescribeTheGemmTheLayerLowersTo) {
  core::Node node = opNode("aten::conv2d",
                           {tensor({2, 512, 1, 1}), tensor({512, 512, 3, 3}), tensor({512}),
                            intList({1, 1}), intList({1, 1}), intList({1, 1}), intValue(1)},
                           {tensor({2, 512, 1, 1})},
                           {"input", "weight", "bias", "stride", "padding", "dilation", "groups"});
  const OpFeatures f = computeFeatures(node);
  ASSERT_EQ(f.x.size(), kNativePathColumn + 7);
  EXPECT_FLOAT_EQ(f.x[kNativePathColumn + 5], 0.0f);                          // not transposed
  EXPECT_FLOAT_EQ(f.x[kNativePathColumn + 6], 1.0f);                          // with a bias
  EXPECT_FLOAT_EQ(f.x[kNativePathColumn + 1], 1.0f);                          // N = 2 x 1 pixel
  EXPECT_FLOAT_EQ(f.x[kNativePathColumn + 2], std::log2(512.0f * 9));         // K = 512 x 9 taps
  EXPECT_FLOAT_EQ(f.x[kNativePathColumn + 3], std::log2(512.0f * 4608 * 4));  // the weight
  EXPECT_FLOAT_EQ(f.x[kNativePathColumn + 4], std::log2(f.flops / f.bytes));
  // One FLOP per weight byte: the layer streams its weight.
  EXPECT_NEAR(f.x[kNativePathColumn + 4], 0.0f, 0.01f);
}

// On a GPU a bias is a pass over the output beside cuDNN's kernel: the last
// column says whether the forward adds one or the backward computes its
// gradient (output_mask[2]).
TEST(ConvFeatures, FlagTheBias) {
  constexpr size_t kBiasColumn = kNativePathColumn + 6;
  auto forward = [](core::Value bias) {
    return computeFeatures(
        opNode("aten::conv2d",
               {tensor({8, 64, 28, 28}), tensor({64, 64, 3, 3}), std::move(bias), intList({1, 1}),
                intList({1, 1}), intList({1, 1}), intValue(1)},
               {tensor({8, 64, 28, 28})},
               {"input", "weight", "bias", "stride", "padding", "dilation", "groups"}));
  };
  EXPECT_FLOAT_EQ(forward(tensor({64})).x[kBiasColumn], 1.0f);
  EXPECT_FLOAT_EQ(forward(noneValue()).x[kBiasColumn], 0.0f);
  auto backward = [](bool grad_bias) {
    return computeFeatures(opNode(
        "aten::convolution_backward",
        {tensor({8, 64, 28, 28}), tensor({8, 64, 28, 28}), tensor({64, 64, 3, 3}), intList({64}),
         intList({1, 1}), intList({1, 1}), intList({1, 1}), boolValue(false), intList({0, 0}),
         intValue(1),
         listValue({boolValue(true), boolValue(true), boolValue(grad_bias)}, "GenericList[Bool]")},
        {tensor({8, 64, 28, 28}), tensor({64, 64, 3, 3}), tensor({64})},
        {"grad_output", "input", "weight", "bias_sizes", "stride", "padding", "dilation",
         "transposed", "output_padding", "groups", "output_mask"}));
  };
  EXPECT_FLOAT_EQ(backward(true).x[kBiasColumn], 1.0f);
  EXPECT_FLOAT_EQ(backward(false).x[kBiasColumn], 0.0f);
}

TEST(ConvFeatures, FlagsTheNativeCpuPath) {
  auto conv = [](int64_t n, int64_t c, int64_t hw, int64_t k, int64_t r, int64_t stride,
                 int64_t groups) {
    core::Node node = opNode(
        "aten::conv2d",
        {tensor({n, c, hw, hw}), tensor({k, c / groups, r, r}), tensor({k}),
         intList({stride, stride}), intList({r / 2, r / 2}), intList({1, 1}), intValue(groups)},
        {tensor({n, k, hw / stride, hw / stride})},
        {"input", "weight", "bias", "stride", "padding", "dilation", "groups"});
    OpFeatures f = computeFeatures(node);
    EXPECT_EQ(f.x.size(), featureCount("conv"));
    EXPECT_EQ(convShape(node).cpu_native_path, f.x[kNativePathColumn] == 1.0f);
    return convShape(node).cpu_native_path;
  };
  EXPECT_TRUE(conv(2, 256, 1, 512, 1, 1, 1));     // 1x1, batch < 16
  EXPECT_FALSE(conv(16, 256, 1, 512, 1, 1, 1));   // 1x1 at batch 16: oneDNN
  EXPECT_FALSE(conv(2, 256, 1, 512, 1, 2, 1));    // strided 1x1: oneDNN
  EXPECT_FALSE(conv(2, 256, 2, 256, 3, 1, 1));    // 3x3, batch 2: oneDNN
  EXPECT_TRUE(conv(1, 512, 2, 512, 3, 1, 1));     // batch 1, 2048 input elements
  EXPECT_FALSE(conv(1, 64, 32, 64, 3, 1, 1));     // batch 1, 65536 input elements
  EXPECT_FALSE(conv(1, 512, 2, 512, 3, 1, 512));  // depthwise: oneDNN
  EXPECT_FALSE(conv(1, 16, 4, 16, 5, 1, 1));      // 5x5: oneDNN
}

// conv_ae's decoder (ConvTranspose2d(32, 16, 4, stride=2, padding=1) on 8x8
// maps at batch 4): LibTorch 1.13 ran it through slow_conv_transpose2d in 563
// us. Read as a forward convolution, the weight [32, 16, 4, 4] made it 32 out
// channels on a 3x3 map, and it was predicted at 35 us.
TEST(ConvFeatures, ATransposedConvolutionGrowsItsMapAndTakesTheNativePath) {
  const std::vector<std::string> args = {"input",   "weight",         "bias",   "stride",
                                         "padding", "output_padding", "groups", "dilation"};
  core::Node fwd =
      opNode("aten::conv_transpose2d",
             {tensor({4, 32, 8, 8}), tensor({32, 16, 4, 4}), tensor({16}), intList({2, 2}),
              intList({1, 1}), intList({0, 0}), intValue(1), intList({1, 1})},
             {tensor({4, 16, 16, 16})}, args);
  const ConvShape s = convShape(fwd);
  EXPECT_TRUE(s.transposed);
  EXPECT_TRUE(s.cpu_native_path);
  EXPECT_DOUBLE_EQ(s.c, 32);
  EXPECT_DOUBLE_EQ(s.k, 16);
  EXPECT_DOUBLE_EQ(s.out_spatial, 16.0 * 16);  // (8 - 1) * 2 - 2 + 3 + 1
  const OpFeatures f = computeFeatures(fwd);
  EXPECT_EQ(f.family, "conv");
  ASSERT_EQ(f.x.size(), featureCount("conv"));
  EXPECT_FLOAT_EQ(f.x.back(), 1.0f);
  // Every input pixel times the [32 x 16 x 16] filter bank.
  EXPECT_DOUBLE_EQ(f.flops, 2.0 * 4 * 64 * 32 * 16 * 16);
  EXPECT_DOUBLE_EQ(f.weight_bytes, 32.0 * 16 * 16 * 4);
  // output_padding adds to the map; the backward (transposed = true) reads
  // the same shapes from (grad_output, input, weight).
  core::Node padded = fwd;
  padded.inputs[5] = intList({1, 1});
  EXPECT_DOUBLE_EQ(convShape(padded).out_spatial, 17.0 * 17);
  core::Node bwd = opNode("aten::convolution_backward",
                          {tensor({4, 16, 16, 16}), tensor({4, 32, 8, 8}), tensor({32, 16, 4, 4}),
                           intList({16}), intList({2, 2}), intList({1, 1}), intList({1, 1}),
                           boolValue(true), intList({0, 0}), intValue(1), intList({1, 1, 1})},
                          {tensor({4, 32, 8, 8}), tensor({32, 16, 4, 4}), tensor({16})},
                          {"grad_output", "input", "weight", "bias_sizes", "stride", "padding",
                           "dilation", "transposed", "output_padding", "groups", "output_mask"});
  const ConvShape b = convShape(bwd);
  EXPECT_TRUE(b.transposed && b.backward && b.cpu_native_path);
  EXPECT_DOUBLE_EQ(b.k, 16);
  EXPECT_DOUBLE_EQ(b.out_spatial, 16.0 * 16);
  EXPECT_DOUBLE_EQ(computeFeatures(bwd).flops, 2.0 * f.flops);
  // A GPU trace's cuDNN op: (self, weight, padding, output_padding, stride,
  // dilation, groups, ...), no `transposed` argument.
  core::Node cudnn =
      opNode("aten::cudnn_convolution_transpose",
             {tensor({4, 32, 8, 8}), tensor({32, 16, 4, 4}), intList({1, 1}), intList({0, 0}),
              intList({2, 2}), intList({1, 1}), intValue(1)},
             {tensor({4, 16, 16, 16})},
             {"self", "weight", "padding", "output_padding", "stride", "dilation", "groups"});
  EXPECT_TRUE(convShape(cudnn).transposed);
  EXPECT_DOUBLE_EQ(convShape(cudnn).out_spatial, 16.0 * 16);
  EXPECT_DOUBLE_EQ(computeFeatures(cudnn).flops, f.flops);
  // The same op with transposed = false is a forward convolution's backward.
  bwd.inputs[7] = boolValue(false);
  EXPECT_FALSE(convShape(bwd).transposed);
}

// transformer_big's dropout with p = 0 returned its input: the same tensor.
TEST(PassThrough, AnOpThatReturnedItsInputAsItWasCostsWhatAViewDoes) {
  const core::Value x = tensor({64, 256, 512}, core::DType::kFloat32, 0, "cpu");
  const std::vector<std::string> args = {"input", "p", "train"};
  core::Node off = opNode("aten::dropout", {x, doubleValue(0.0), boolValue(true)}, {x}, args);
  EXPECT_EQ(computeFeatures(off).family, "view");
  EXPECT_EQ(computeFeatures(off).op, "aten::dropout");
  core::Node on = opNode("aten::dropout", {x, doubleValue(0.1), boolValue(true)},
                         {tensor({64, 256, 512}, core::DType::kFloat32, 0, "cpu")}, args);
  EXPECT_EQ(computeFeatures(on).family, "elementwise");
  // In place (Tensor(a!) self): it returns self and did the work.
  core::Node add = opNode("aten::add_", {x, x}, {x}, {"self", "other"});
  auto schema = std::make_shared<core::OpSchema>(*add.schema);
  schema->arguments[0].is_mutable = true;
  add.schema = schema;
  EXPECT_EQ(computeFeatures(add).family, "elementwise");
  // Without a schema an out= variant cannot be told apart: the op's family.
  core::Node bare = off;
  bare.schema.reset();
  EXPECT_EQ(computeFeatures(bare).family, "elementwise");
}

// The dense weight gradient of an embedding backward is written whole.
TEST(EmbeddingFeatures, DenseBackwardWritesTheWholeTableGradient) {
  core::Node bwd = opNode("aten::_embedding_bag_backward",
                          {tensor({128, 16}), tensor({1280}, core::DType::kInt64),
                           tensor({129}, core::DType::kInt64), intValue(20000)},
                          {tensor({20000, 16})}, {"grad", "indices", "offsets", "num_weights"});
  OpFeatures f = computeFeatures(bwd);
  EXPECT_EQ(f.family, "embedding_bag");
  const double gathered = 1280.0 * 16 * 4;
  EXPECT_DOUBLE_EQ(f.gathered_bytes, gathered);
  EXPECT_DOUBLE_EQ(f.bytes, 2 * gathered + 128.0 * 16 * 4 + 1280.0 * 8 + 20000.0 * 16 * 4);
}

TEST(EmbeddingFeatures, PoissonHistogramMatchesTheory) {
  // lambda = 1: P(k | k >= 1) = e^-1 / k! / (1 - e^-1).
  std::vector<double> h = poissonReuseHistogram(1000, 1000);
  double touched = 1 - std::exp(-1.0);
  EXPECT_NEAR(h[0], std::exp(-1.0) / touched, 1e-9);
  EXPECT_NEAR(h[1], std::exp(-1.0) / 2 / touched, 1e-9);
  double sum = 0;
  for (double x : h) sum += x;
  EXPECT_NEAR(sum, 1.0, 1e-9);
  // Very sparse access: nearly every index unique.
  EXPECT_NEAR(uniqueFraction(poissonReuseHistogram(100, 1e7)), 1.0, 1e-3);
}

TEST(EmbeddingFeatures, BagSizesFromIndicesAndOffsets) {
  core::Node n = opNode("aten::embedding_bag",
                        {tensor({100000, 64}), tensor({4096 * 20}, core::DType::kInt64),
                         tensor({4097}, core::DType::kInt64)},
                        {tensor({4096, 64})});
  OpFeatures f = computeFeatures(n);
  EXPECT_EQ(f.family, "embedding_bag");
  EXPECT_FLOAT_EQ(f.x[0], static_cast<float>(std::log2(4096.0)));  // batch
  EXPECT_FLOAT_EQ(f.x[2], static_cast<float>(std::log2(20.0)));    // pooling
  EXPECT_DOUBLE_EQ(f.table_bytes, 100000.0 * 64 * 4);
}

TEST(Roofline, TakesTheBindingRoof) {
  DeviceSpec d = gpu(100, 1000, 100, 1000);
  RooflineModel m;
  m.t0_us = 2;
  m.compute_eff = 0.5;
  m.memory_eff = 1.0;
  OpFeatures f;
  f.flops = 1e9;  // 1e9 / 50e12 = 20 us
  f.bytes = 1e6;  // 1e6 / 1e12 = 1 us
  EXPECT_NEAR(m.predictUs(f, d), 22.0, 1e-9);
  f.bytes = 1e8;  // 100 us memory-bound
  EXPECT_NEAR(m.predictUs(f, d), 102.0, 1e-9);
}

TEST(BandwidthCurve, InterpolatesBetweenKnotsInLogSize) {
  BandwidthCurveModel m;
  m.t0_us = 1;
  m.knots_log2_bytes = {10, 20};
  m.knots_bandwidth = {1e9, 3e9};
  EXPECT_DOUBLE_EQ(m.achievedBandwidth(1 << 15), 2e9);
  EXPECT_DOUBLE_EQ(m.achievedBandwidth(1), 1e9);
  EXPECT_DOUBLE_EQ(m.achievedBandwidth(1e12), 3e9);
  m.op_factor["aten::cat"] = 2.0;
  OpFeatures f;
  f.op = "aten::cat";
  f.bytes = 1 << 20;  // at 3e9 B/s: 349.5 us
  DeviceSpec d = gpu(100, 1000, 1, 1);
  EXPECT_NEAR(m.predictUs(f, d), 1 + 2 * (1 << 20) / 3e9 * 1e6, 1e-9);
}

// `to` and `_to_copy` run copy_'s kernel: without factors of their own they
// take copy_'s, not the curve's 1.0; another op without one keeps 1.0.
TEST(BandwidthCurve, ACastTakesTheFactorAndFixedCostOfCopy) {
  BandwidthCurveModel m;
  m.t0_us = 1;
  m.knots_log2_bytes = {10, 20};
  m.knots_bandwidth = {1e9, 1e9};
  m.op_factor["aten::copy_"] = 0.25;
  m.op_t0_us["aten::copy_"] = 3;
  const DeviceSpec d = gpu(100, 1000, 1, 1);
  OpFeatures f;
  f.bytes = 1e6;  // 1000 us at 1e9 B/s
  for (const char* cast : {"aten::to", "aten::_to_copy", "aten::copy_"}) {
    f.op = cast;
    EXPECT_NEAR(m.predictUs(f, d), 3 + 250, 1e-9) << cast;
  }
  f.op = "aten::clone";
  EXPECT_NEAR(m.predictUs(f, d), 1 + 1000, 1e-9);
  m.op_factor["aten::to"] = 0.5;  // a fit of its own wins
  f.op = "aten::to";
  EXPECT_NEAR(m.predictUs(f, d), 3 + 500, 1e-9);
}

TEST(BandwidthCurve, PastTheLastKnotTheTimeHoldsUntilTheExtrapolationBandwidth) {
  BandwidthCurveModel m;
  m.knots_log2_bytes = {10, 20};
  m.knots_bandwidth = {1e9, 3e9};
  EXPECT_DOUBLE_EQ(m.achievedBandwidth(std::exp2(22)), 3e9) << "flat by default";
  m.extrapolate_bandwidth = 12e9;
  EXPECT_DOUBLE_EQ(m.achievedBandwidth(std::exp2(15)), 2e9) << "inside the knots: unchanged";
  EXPECT_DOUBLE_EQ(m.achievedBandwidth(std::exp2(21)), 6e9) << "twice the bytes, the same time";
  EXPECT_DOUBLE_EQ(m.achievedBandwidth(std::exp2(22)), 12e9);
  EXPECT_DOUBLE_EQ(m.achievedBandwidth(std::exp2(30)), 12e9) << "then the DRAM rate";
  m.extrapolate_bandwidth = 2e9;  // below the last knot: flat
  EXPECT_DOUBLE_EQ(m.achievedBandwidth(std::exp2(30)), 3e9);
}

TEST(BandwidthCurve, TheExtrapolationBandwidthIsSavedAndOptionalOnLoad) {
  BandwidthCurveModel m;
  m.knots_log2_bytes = {10};
  m.knots_bandwidth = {1e9};
  m.extrapolate_bandwidth = 5e9;
  nlohmann::json j = m.save("", "");
  auto loaded =
      std::dynamic_pointer_cast<const BandwidthCurveModel>(BandwidthCurveModel::fromJson(j, ""));
  ASSERT_TRUE(loaded);
  EXPECT_DOUBLE_EQ(loaded->extrapolate_bandwidth, 5e9);
  j.erase("extrapolate_bandwidth");  // files from before it: flat
  EXPECT_DOUBLE_EQ(
      std::dynamic_pointer_cast<const BandwidthCurveModel>(BandwidthCurveModel::fromJson(j, ""))
          ->extrapolate_bandwidth,
      0.0);
  j["extrapolate_bandwidth"] = -1.0;
  EXPECT_THROW(BandwidthCurveModel::fromJson(j, ""), InputError);
}

TEST(AnalyticModels, NegativeFixedCostsAndFactorsAreCorruptFiles) {
  // Found by a bad-input hunt: a t0_us of -1e9 silently took 2 ms off a step.
  nlohmann::json roofline = {{"t0_us", -1e9}, {"compute_eff", 0.5}, {"memory_eff", 0.5}};
  EXPECT_THROW(RooflineModel::fromJson(roofline, ""), InputError);
  roofline["t0_us"] = 0.0;
  EXPECT_NO_THROW(RooflineModel::fromJson(roofline, ""));
  BandwidthCurveModel m;
  m.knots_log2_bytes = {10};
  m.knots_bandwidth = {1e9};
  const nlohmann::json good = m.save("", "");
  for (const auto& [key, bad] : {std::pair{"t0_us", nlohmann::json(-1.0)},
                                 std::pair{"op_t0_us", nlohmann::json{{"aten::add", -2.0}}},
                                 std::pair{"op_factor", nlohmann::json{{"aten::add", 0.0}}}}) {
    nlohmann::json j = good;
    j[key] = bad;
    EXPECT_THROW(BandwidthCurveModel::fromJson(j, ""), InputError) << key;
  }
}

TEST(AnalyticModels, FiguresNoFitCouldGiveAreRefusedNamingTheirKey) {
  // A bad-input hunt: a constant model's -5 us was clamped to 0 silently,
  // 1e308 us became nan blamed on "the model set", compute_eff 1e300 an
  // infinitely fast GEMM.
  const auto messageOf = [](auto load, const nlohmann::json& j) -> std::string {
    try {
      load(j, "");
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  const auto constant = [](const nlohmann::json& j, const std::string& d) {
    return ConstantModel::fromJson(j, d);
  };
  EXPECT_EQ(messageOf(constant, {{"default_us", -5.0}}),
            "constant model: default_us must be from 0 to 1e+09 us, got -5");
  EXPECT_EQ(messageOf(constant, {{"default_us", 1.0}, {"op_us", {{"aten::view", 1e308}}}}),
            "constant model: op_us[aten::view] must be from 0 to 1e+09 us, got 1e+308");
  EXPECT_EQ(messageOf(constant, {{"default_us", 1.0}, {"op_us", {{"aten::view", 0.5}}}}), "");
  const auto roofline = [](const nlohmann::json& j, const std::string& d) {
    return RooflineModel::fromJson(j, d);
  };
  EXPECT_EQ(messageOf(roofline, {{"t0_us", 1.0}, {"compute_eff", 1e300}, {"memory_eff", 0.5}}),
            "roofline model: compute_eff must be > 0 and at most 1000, got 1e+300");
  const auto cache = [](const nlohmann::json& j, const std::string& d) {
    return CacheModel::fromJson(j, d);
  };
  EXPECT_EQ(messageOf(cache, {{"t0_us", -1.0}, {"eff", 1.2}}),
            "cache model: t0_us must be from 0 to 1e+09 us, got -1");
  BandwidthCurveModel m;
  m.knots_log2_bytes = {10};
  m.knots_bandwidth = {1e300};
  const auto curve = [](const nlohmann::json& j, const std::string& d) {
    return BandwidthCurveModel::fromJson(j, d);
  };
  EXPECT_NE(messageOf(curve, m.save("", "")).find("knot bandwidths must be > 0 and at most 1e+15"),
            std::string::npos);
  m.knots_bandwidth = {1e9};
  m.op_factor = {{"aten::item", 4207.0}};  // the H200's device sync: a real factor
  EXPECT_EQ(messageOf(curve, m.save("", "")), "");
}

// Samples of 128-384 KiB that take 12-20 us, as a GPU's small softmaxes do.
std::vector<Sample> smallLatencyBoundSamples() {
  std::vector<Sample> out;
  for (double kib : {128.0, 192.0, 256.0, 384.0}) {
    Sample s;
    s.f.op = "aten::_softmax";
    s.f.variant = s.f.op;
    s.f.dtype = core::DType::kFloat32;
    s.f.bytes = kib * 1024;
    s.us = 10.0 + kib / 40.0;
    out.push_back(s);
  }
  return out;
}

TEST(BandwidthCurveFit, OnAGpuSamplesInsideL2DoNotSetTheRateForLargeOps) {
  const std::vector<Sample> samples = smallLatencyBoundSamples();
  std::vector<const Sample*> ptrs;
  for (const Sample& s : samples) ptrs.push_back(&s);
  DeviceSpec d = gpu(100, 3000, 132, 1980);
  d.caches = {{"L2", 50 << 20, 0.0}};
  const auto on_gpu = fitBandwidthCurve(ptrs, d);
  EXPECT_DOUBLE_EQ(on_gpu->extrapolate_bandwidth, 0.9 * 3000e9);
  OpFeatures big = samples.back().f;
  big.bytes = 500e6;
  // 500 MB at the small samples' ~20 GB/s would be ~25 ms; at 2.7 TB/s it is 185 us.
  EXPECT_LT(on_gpu->predictUs(big, d), 400.0);

  d.kind = DeviceKind::kCpu;
  const auto on_cpu = fitBandwidthCurve(ptrs, d);
  EXPECT_DOUBLE_EQ(on_cpu->extrapolate_bandwidth, 0.0) << "a CPU's small ops are not latency-bound";
}

TEST(BandwidthCurve, FixedCostByVariantAndContextAndColdInputsAtDramSpeed) {
  BandwidthCurveModel m;
  m.t0_us = 5;
  m.knots_log2_bytes = {10};
  m.knots_bandwidth = {4e9};  // cache-hot curve
  m.op_t0_us = {{"aten::add_", 0.6}, {"aten::add_#0d#mix", 2.0}, {"aten::add_#0d#mix@rep", 1.5}};
  DeviceSpec d = gpu(100, 1, 1, 1);  // DRAM 1 GB/s
  OpFeatures f;
  f.dtype = core::DType::kFloat32;
  f.op = "aten::add_";
  f.variant = "aten::add_";
  EXPECT_NEAR(m.predictUs(f, d), 0.6, 1e-9);
  f.variant = "aten::add_#0d#mix";
  EXPECT_NEAR(m.predictUs(f, d), 2.0, 1e-9);
  f.repeated = true;
  EXPECT_NEAR(m.predictUs(f, d), 1.5, 1e-9);
  f.variant = "aten::add_#nc";  // unknown variant: the op name's value
  EXPECT_NEAR(m.predictUs(f, d), 0.6, 1e-9);
  f.op = "aten::mul_";  // unknown op: the family's
  f.variant = "aten::mul_";
  EXPECT_NEAR(m.predictUs(f, d), 5.0, 1e-9);
  f.bytes = 4000;  // 1 us hot
  EXPECT_NEAR(m.predictUs(f, d), 6.0, 1e-9);
  f.cold_bytes = 1000;  // 1 us from DRAM: hidden under the 1 us body
  EXPECT_NEAR(m.predictUs(f, d), 6.0, 1e-9);
  f.cold_bytes = 2000;  // 2 us from DRAM: the body takes at least that
  EXPECT_NEAR(m.predictUs(f, d), 7.0, 1e-9);
  m.knots_log2_bytes = {16, 18, 20, 22};
  m.knots_bandwidth = {8e9, 10e9, 9e9, 7e9};  // falls below 75% of the peak at 2^22
  EXPECT_DOUBLE_EQ(m.cacheKneeBytes(), std::exp2(21));
  m.knots_bandwidth = {8e9, 10e9, 9e9, 8e9};
  EXPECT_DOUBLE_EQ(m.cacheKneeBytes(), 0.0);
}

TEST(AlphaBeta, RingFormulasAndBusBandwidthFactors) {
  AlphaBetaTerms ar = alphaBetaTerms("all_reduce", 8);
  EXPECT_DOUBLE_EQ(ar.latency_steps, 14);      // 2(p-1)
  EXPECT_DOUBLE_EQ(ar.byte_factor, 14.0 / 8);  // 2(p-1)/p
  AlphaBetaTerms ag = alphaBetaTerms("_allgather_base", 4);
  EXPECT_DOUBLE_EQ(ag.latency_steps, 3);
  EXPECT_DOUBLE_EQ(ag.byte_factor, 0.75);
  EXPECT_DOUBLE_EQ(alphaBetaTerms("all_reduce", 1).byte_factor, 0.0);
  EXPECT_DOUBLE_EQ(busBandwidthFactor("allreduce", 8), 1.75);
  EXPECT_DOUBLE_EQ(busBandwidthFactor("reduce_scatter", 8), 0.875);
  EXPECT_DOUBLE_EQ(busBandwidthFactor("all_to_all", 4), 0.75);
  EXPECT_DOUBLE_EQ(busBandwidthFactor("broadcast", 8), 1.0);
  // 1 GB all-reduce over 8 ranks in 10 ms: algbw 100 GB/s, busbw 175 GB/s.
  EXPECT_NEAR(busBandwidth("all_reduce", 8, 1e9, 0.01), 175e9, 1);

  AlphaBetaModel m;
  m.fallback = {5e-6, 1.0 / 100e9};
  OpFeatures f;
  f.collective = "all_reduce";
  f.world_size = 8;
  f.message_bytes = 1e8;
  // 14 * 5 us + 1.75 * 1e8 / 100e9 s = 70 us + 1750 us
  EXPECT_NEAR(m.predictUs(f, gpu(1, 1, 1, 1)), 1820.0, 1e-6);
}

TEST(CacheModel, ResidentTablesReadAtCacheBandwidth) {
  DeviceSpec d = gpu(100, 1000, 1, 1);
  d.caches = {{"L2", 1 << 20, 4000e9}};
  OpFeatures f;
  f.gathered_bytes = 1e6;
  f.bytes = 1e6;
  f.unique_fraction = 1.0;
  f.table_bytes = 1 << 19;  // fits: all hits
  EXPECT_NEAR(CacheModel::memoryTimeUs(f, d), 1e6 / 4000e9 * 1e6, 1e-9);
  f.table_bytes = 1e12;  // ~no residency, no reuse: DRAM
  EXPECT_NEAR(CacheModel::memoryTimeUs(f, d), 1e6 / 1000e9 * 1e6, 1e-3);
}

TEST(Habitat, ScalingFollowsTheFormula) {
  DeviceSpec o = gpu(312, 2039, 108, 1410);
  DeviceSpec dst = gpu(989, 3350, 132, 1980);
  // Memory-bound (gamma 1): bandwidth ratio only.
  EXPECT_NEAR(habitatScale(100, 1.0, o, dst), 100 * 2039.0 / 3350, 1e-9);
  // Compute-bound (gamma 0): clock and SM ratios.
  EXPECT_NEAR(habitatScale(100, 0.0, o, dst), 100 * (1410.0 / 1980) * (108.0 / 132), 1e-9);
  double g = 0.3;
  EXPECT_NEAR(habitatScale(100, g, o, dst),
              100 * std::pow(2039.0 / 3350, g) * std::pow(1410.0 / 1980, 1 - g) *
                  std::pow(108.0 / 132, 1 - g),
              1e-9);
  // Gamma from intensity against the destination's ridge point.
  double ridge = dst.ridgePoint(core::DType::kFloat32);
  EXPECT_DOUBLE_EQ(habitatGamma(ridge * 1e6, 1e6, core::DType::kFloat32, dst), 0.5);
  EXPECT_DOUBLE_EQ(habitatGamma(ridge * 1e6 / 8, 1e6, core::DType::kFloat32, dst), 1.0);
  EXPECT_DOUBLE_EQ(habitatGamma(ridge * 1e6 * 8, 1e6, core::DType::kFloat32, dst), 0.0);
  EXPECT_DOUBLE_EQ(habitatGamma(0, 1e6, core::DType::kFloat32, dst), 1.0);
}

}  // namespace
}  // namespace tracetwin::predictors
