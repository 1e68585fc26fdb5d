// Which outputs an op maps fresh (fresh_pages.h), and the page faults a CPU
// prediction charges for them.
#include "predictors/host/fresh_pages.h"

#include <gtest/gtest.h>

#include "predictors/kernels/analytic_models.h"
#include "predictors/simulation/predictor.h"
#include "tests/support/graphs.h"
#include "tests/support/values.h"

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;


core::Value cpuTensor(int64_t bytes, int64_t storage) {
  return tensor({bytes / 4}, core::DType::kFloat32, storage, "cpu");
}

TEST(FreshPages, AnOutputAtTheMmapThresholdOnANewStorageIsMappedFresh) {
  const core::Value in = cpuTensor(64 * kMiB, 1);
  EXPECT_DOUBLE_EQ(freshMappedBytes(opNode("aten::relu", {in}, {cpuTensor(64 * kMiB, 2)})).outputs,
                   64.0 * kMiB);
  EXPECT_DOUBLE_EQ(freshMappedBytes(opNode("aten::relu", {in}, {cpuTensor(32 * kMiB, 2)})).outputs,
                   32.0 * kMiB);
  // Below the threshold: from the heap.
  EXPECT_DOUBLE_EQ(freshMappedBytes(opNode("aten::relu", {in}, {cpuTensor(31 * kMiB, 2)})).outputs,
                   0);
  // In place (or a view): the output is an input's storage.
  EXPECT_DOUBLE_EQ(freshMappedBytes(opNode("aten::relu_", {in}, {in})).outputs, 0);
  // Two outputs on one new storage count once, by the larger.
  EXPECT_DOUBLE_EQ(freshMappedBytes(opNode("aten::split", {in},
                                           {cpuTensor(40 * kMiB, 3), cpuTensor(48 * kMiB, 3)}))
                       .outputs,
                   48.0 * kMiB);
}

// A sparse gradient of a 20,000 x 64 table with 163,840 looked-up rows, as
// a trace records it (no storage) and core::inferSparseTensors marks it.
TEST(FreshPages, ASparseGradientsArraysBeyondTheThresholdAreMappedFresh) {
  const core::Value grad = tensorValue(7, 0, {20000, 64});
  const core::Value small = tensorValue(8, 0, {20000, 64});
  core::SparseTensors sparse;
  sparse[7] = {1, 163840, core::kNoNode};
  sparse[8] = {1, 1024, core::kNoNode};
  const double values = 163840.0 * 64 * 4;  // 40 MiB; its 1.25 MiB of indices stay on the heap
  EXPECT_DOUBLE_EQ(
      freshSparseBytes(opNode("aten::_embedding_bag_backward", {cpuTensor(kMiB, 1)}, {grad}),
                       sparse),
      values);
  // AccumulateGrad's add_ into the cleared .grad concatenates into new arrays.
  EXPECT_DOUBLE_EQ(freshSparseBytes(opNode("aten::add_", {grad, grad}, {grad}), sparse), values);
  // Clearing, scaling and viewing it allocate nothing; nor does a small one.
  EXPECT_EQ(freshSparseBytes(opNode("aten::zero_", {grad}, {grad}), sparse), 0);
  EXPECT_EQ(freshSparseBytes(opNode("aten::mul_", {grad}, {grad}), sparse), 0);
  EXPECT_EQ(freshSparseBytes(opNode("aten::_values", {grad}, {grad}), sparse), 0);
  EXPECT_EQ(freshSparseBytes(opNode("aten::clone", {small}, {small}), sparse), 0);
  // Unknown nnz, or a dense output: nothing here (freshMappedBytes has those).
  core::SparseTensors unknown;
  unknown[7] = {1, 0, core::kNoNode};
  EXPECT_EQ(freshSparseBytes(opNode("aten::clone", {grad}, {grad}), unknown), 0);
  EXPECT_EQ(freshSparseBytes(opNode("aten::relu", {grad}, {cpuTensor(64 * kMiB, 2)}), sparse), 0);
}

core::Node conv2d(int64_t n, int64_t c, int64_t hw, int64_t k, int64_t r) {
  return opNode("aten::conv2d",
                {tensor({n, c, hw, hw}, core::DType::kFloat32, 0, "cpu"),
                 tensor({k, c, r, r}, core::DType::kFloat32, 0, "cpu"),
                 tensor({k}, core::DType::kFloat32, 0, "cpu"), intList({1, 1}),
                 intList({r / 2, r / 2}), intList({1, 1}), intValue(1)},
                {tensor({n, k, hw, hw}, core::DType::kFloat32, 0, "cpu")},
                {"input", "weight", "bias", "stride", "padding", "dilation", "groups"});
}

TEST(FreshPages, AOneDnnConvolutionAlsoMapsAReorderBufferPerLargeTensor) {
  // cnn_big's first layer: 25 MB in (below the threshold), 512 MiB out.
  const core::Node first = conv2d(512, 3, 64, 64, 3);
  EXPECT_DOUBLE_EQ(oneDnnReorderBytes(first), 512.0 * kMiB);
  EXPECT_DOUBLE_EQ(freshMappedBytes(first).outputs, 512.0 * kMiB);
  EXPECT_DOUBLE_EQ(freshMappedBytes(first).temporaries, 512.0 * kMiB);  // the output's buffer
  // Both sides large: 128 MiB in, 256 MiB out.
  EXPECT_DOUBLE_EQ(oneDnnReorderBytes(conv2d(512, 64, 32, 128, 3)), 384.0 * kMiB);
  // A 1x1 convolution below batch 16 runs LibTorch's native kernels.
  EXPECT_DOUBLE_EQ(oneDnnReorderBytes(conv2d(8, 4096, 32, 64, 1)), 0);
  // Not a convolution.
  EXPECT_DOUBLE_EQ(oneDnnReorderBytes(
                       opNode("aten::relu", {cpuTensor(64 * kMiB, 1)}, {cpuTensor(64 * kMiB, 2)})),
                   0);
}

// relu on 64 MiB: its output's 16,384 pages at 1 us each on a CPU that
// measured page faults, and 0.25 us each to unmap them when freed; nothing
// where the spec has no figure.
TEST(FreshPages, ACpuPredictionChargesEachPageOfAFreshOutput) {
  core::Node relu = opNode("aten::relu", {cpuTensor(64 * kMiB, 1)}, {cpuTensor(64 * kMiB, 2)});
  relu.op_schema_text = "aten::relu(Tensor self) -> Tensor";
  const core::Graph g = graphOfOps({relu});
  ModelSet set;
  set.device.name = "test-cpu";
  set.device.kind = DeviceKind::kCpu;
  set.device.peak_flops = {{"float32", 1e11}};
  set.device.memory_bandwidth = 10e9;
  set.setModel("elementwise", BandwidthCurveModel::fromDevice(set.device));
  const double without = predictGraph(g, set, PredictOptions{}).per_op.at(0).predicted_us;
  const double cpu_without = predictGraph(g, set, PredictOptions{}).per_op.at(0).cpu_us;
  set.device.page_fault_us = 1.0;
  set.device.page_unmap_us = 0.25;
  const OpPrediction with = predictGraph(g, set, PredictOptions{}).per_op.at(0);
  EXPECT_DOUBLE_EQ(with.page_fault_us, 16384.0);
  EXPECT_NEAR(with.predicted_us, without + 16384.0, 1e-6);
  // Its free unmaps the output between ops: CPU time outside the op.
  EXPECT_NEAR(with.cpu_us, cpu_without + 0.25 * 16384, 1e-6);
  // Not carried to another device: the figure is this host's.
  PredictOptions elsewhere;
  elsewhere.target = set.device;
  elsewhere.target->kind = DeviceKind::kGpu;
  EXPECT_DOUBLE_EQ(predictGraph(g, set, elsewhere).per_op.at(0).page_fault_us, 0);
}

}  // namespace
}  // namespace tracetwin::predictors
