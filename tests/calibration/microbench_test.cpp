#include "calibration/microbench.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "calibration/graph_builder.h"
#include "core/errors.h"
#include "core/op_family.h"
#include "predictors/kernels/feature_shapes.h"

namespace tracetwin::calibration {
namespace {

// Families a grid's helper ops may belong to besides its own (a transpose
// feeding contiguous is a view; pooling pairs are reductions).
const std::map<std::string, std::set<std::string>> kAllowedExtra = {
    {"copy", {"view"}}, {"reduction", {"elementwise"}},  // the ReLU that makes the pooled maps
};

// Up to `n` cases spread evenly over the grid (the full GEMM grid has ~10k).
std::vector<const MicrobenchCase*> spread(const std::vector<MicrobenchCase>& cases, size_t n) {
  std::vector<const MicrobenchCase*> out;
  const size_t step = std::max<size_t>(1, cases.size() / n);
  for (size_t i = 0; i < cases.size(); i += step) out.push_back(&cases[i]);
  return out;
}

TEST(Microbench, EveryFamilyBuildsValidGraphsOfItsOwnOps) {
  for (const MicrobenchFamily& fam : microbenchRegistry()) {
    SCOPED_TRACE(fam.name);
    const std::vector<MicrobenchCase> cases = fam.cases(GridOptions{});
    ASSERT_GE(cases.size(), 20u) << "grid too small to fit and hold out 20%";
    std::set<std::string> labels;
    for (const MicrobenchCase* c : spread(cases, 60)) {
      SCOPED_TRACE(c->label);
      EXPECT_TRUE(labels.insert(c->label).second) << "duplicate grid point";
      EXPECT_EQ(c->family, fam.name);
      EXPECT_GT(c->est_us, 0);
      const core::Graph g = c->build();  // finalize() throws on a bad structure
      EXPECT_TRUE(g.warnings.empty()) << g.warnings.front();
      const core::Selection sel = core::selectTopLevelOps(g);
      // Every node but the process and thread nodes is a selected operator.
      EXPECT_EQ(sel.ops.size(), g.nodes().size() - 2);
      bool has_own = false;
      for (core::NodeId id : sel.ops) {
        const core::Node& n = g.node(id);
        ASSERT_TRUE(n.schema != nullptr) << n.op_schema_text;
        if (n.scope == kSpacerScope) {
          EXPECT_EQ(n.name, "aten::copy_");
          continue;
        }
        const std::string f = core::opFamily(n);
        has_own = has_own || f == fam.name;
        auto extra = kAllowedExtra.find(fam.name);
        const bool allowed =
            f == fam.name || (extra != kAllowedExtra.end() && extra->second.count(f));
        EXPECT_TRUE(allowed) << n.name << " is in family " << f;
      }
      EXPECT_TRUE(has_own);
      // One copy alone, what the calibrator interleaves with other small
      // cases: the same ops, once, in a graph of its own.
      ASSERT_TRUE(static_cast<bool>(c->add_copy));
      EXPECT_GT(c->copy_us, 0);
      EXPECT_LE(c->copy_us, c->est_us);
      GraphBuilder one("cpu");
      c->add_copy(one);
      const core::NodeId first = one.nextNodeId();
      c->add_copy(one);
      const core::NodeId end = one.nextNodeId();
      const core::Graph twice = one.build("two copies");
      EXPECT_EQ(end - first, first - 3) << "copies differ in op count";
      EXPECT_EQ(core::selectTopLevelOps(twice).ops.size(), twice.nodes().size() - 2);
    }
  }
}

const MicrobenchCase& findCase(const std::vector<MicrobenchCase>& cases, const std::string& label) {
  for (const MicrobenchCase& c : cases) {
    if (c.label == label) return c;
  }
  throw std::runtime_error("no grid point " + label);
}

// A conv point by its label before the dtype; half the grid carries a bias,
// and which half is not what these tests are about.
const MicrobenchCase& findConv(const std::vector<MicrobenchCase>& cases, const std::string& layer,
                               const std::string& dtype) {
  for (const MicrobenchCase& c : cases) {
    if (c.label == layer + " " + dtype || c.label == layer + " bias " + dtype) return c;
  }
  throw std::runtime_error("no grid point " + layer + " [bias] " + dtype);
}

// A GPU's grids reach the sizes its workloads run (GEMMs to 8192, conv
// batches to 256) with budget estimates scaled to its speed; the CPU grids
// stay where a 2-core host measures a point in ~0.1 s.
TEST(Microbench, AcceleratorGridsAddGpuSizes) {
  GridOptions gpu;
  gpu.device = "cuda:0";
  gpu.accelerator = true;
  auto has = [](const std::vector<MicrobenchCase>& cases, const std::string& label) {
    return std::any_of(cases.begin(), cases.end(),
                       [&](const MicrobenchCase& c) { return c.label == label; });
  };
  const std::vector<MicrobenchCase> gemm_gpu = gemmCases(gpu), gemm_cpu = gemmCases(GridOptions{});
  EXPECT_TRUE(has(gemm_gpu, "mm m=8192 n=8192 k=8192 float32"));
  EXPECT_FALSE(has(gemm_cpu, "mm m=8192 n=8192 k=8192 float32"));
  EXPECT_TRUE(has(gemm_cpu, "mm m=512 n=512 k=512 float32"));
  EXPECT_GT(gemm_gpu.size(), gemm_cpu.size());
  const std::vector<MicrobenchCase> conv_gpu = convCases(gpu), conv_cpu = convCases(GridOptions{});
  auto batch128 = [](const MicrobenchCase& c) { return c.label.rfind("conv2d n=128 ", 0) == 0; };
  EXPECT_TRUE(std::any_of(conv_gpu.begin(), conv_gpu.end(), batch128));
  EXPECT_FALSE(std::any_of(conv_cpu.begin(), conv_cpu.end(), batch128));
  // The same point is budgeted as ~kAcceleratorSpeedup times faster.
  auto find = [](const std::vector<MicrobenchCase>& cases, const std::string& label) {
    auto it = std::find_if(cases.begin(), cases.end(),
                           [&](const MicrobenchCase& c) { return c.label == label; });
    return it == cases.end() ? nullptr : &*it;
  };
  const MicrobenchCase* on_gpu = find(gemm_gpu, "mm m=512 n=512 k=512 float32");
  const MicrobenchCase* on_cpu = find(gemm_cpu, "mm m=512 n=512 k=512 float32");
  ASSERT_NE(on_gpu, nullptr);
  ASSERT_NE(on_cpu, nullptr);
  EXPECT_LT(on_gpu->copy_us * 100, on_cpu->copy_us) << on_gpu->copy_us << " vs " << on_cpu->copy_us;
  // ResNet-50's wide 1x1 layers and the batch norms after them.
  EXPECT_NO_THROW(findConv(conv_gpu, "conv2d n=32 c=256 k=1024 hw=56 r=1 s=2", "float32"));
  EXPECT_THROW(findConv(conv_cpu, "conv2d n=32 c=256 k=1024 hw=56 r=1 s=2", "float32"),
               std::runtime_error);
  const std::vector<MicrobenchCase> norm_gpu = normCases(gpu), norm_cpu = normCases(GridOptions{});
  EXPECT_TRUE(has(norm_gpu, "batch_norm [32x64x112x112] float32") ||
              has(norm_gpu, "batch_norm [32x64x112x112] cudnn float32"));
  EXPECT_FALSE(has(norm_cpu, "batch_norm [32x64x112x112] float32"));
  // Memory-bound ops past a GPU's L2 (an H200's ResNet-50 add_ reads 308 MB).
  const auto ew_gpu = elementwiseCases(gpu), ew_cpu = elementwiseCases(GridOptions{});
  auto at64m = [](const MicrobenchCase& c) {
    return c.label.find(" numel=67108864 ") != std::string::npos;
  };
  EXPECT_TRUE(std::any_of(ew_gpu.begin(), ew_gpu.end(), at64m));
  EXPECT_FALSE(std::any_of(ew_cpu.begin(), ew_cpu.end(), at64m));
  const auto copy_gpu = copyCases(gpu), copy_cpu = copyCases(GridOptions{});
  EXPECT_TRUE(std::any_of(copy_gpu.begin(), copy_gpu.end(), at64m));
  EXPECT_FALSE(std::any_of(copy_cpu.begin(), copy_cpu.end(), at64m));
  const auto red_gpu = reductionCases(gpu), red_cpu = reductionCases(GridOptions{});
  EXPECT_TRUE(has(red_gpu, "max_pool2d 3x3 pad 1 [32x64x112x112] float32"));
  EXPECT_FALSE(has(red_cpu, "max_pool2d 3x3 pad 1 [32x64x112x112] float32"));
  std::printf(
      "grid points cpu/gpu: gemm %zu/%zu conv %zu/%zu norm %zu/%zu elementwise %zu/%zu copy "
      "%zu/%zu reduction %zu/%zu\n",
      gemm_cpu.size(), gemm_gpu.size(), conv_cpu.size(), conv_gpu.size(), norm_cpu.size(),
      norm_gpu.size(), ew_cpu.size(), ew_gpu.size(), copy_cpu.size(), copy_gpu.size(),
      red_cpu.size(), red_gpu.size());
}

// On a GPU, batch norms alternate the backward autograd records after cuDNN
// (cudnn_batch_norm_backward, with an empty reserve space) with the native
// one; the CPU has no cuDNN.
TEST(Microbench, GpuBatchNormsAlsoRunCudnnBackward) {
  GridOptions gpu;
  gpu.device = "cuda:0";
  gpu.accelerator = true;
  size_t cudnn = 0, native = 0;
  for (const MicrobenchCase& c : normCases(gpu)) {
    if (c.label.rfind("batch_norm", 0) != 0) continue;
    const core::Graph g = c.build();
    for (core::NodeId id : core::selectTopLevelOps(g).ops) {
      const core::Node& n = g.node(id);
      if (n.name == "aten::cudnn_batch_norm_backward") {
        ++cudnn;
        EXPECT_NE(c.label.find(" cudnn "), std::string::npos) << c.label;
        ASSERT_EQ(n.inputs.size(), 9u);
        EXPECT_EQ(n.inputs[8].tensor->shape, (std::vector<int64_t>{0}));
        EXPECT_EQ(n.inputs[8].tensor->dtype, core::DType::kUInt8);
        EXPECT_EQ(n.inputs[0].tensor->shape, n.inputs[1].tensor->shape);
      }
      if (n.name == "aten::native_batch_norm_backward") ++native;
    }
    if (cudnn + native > 40) break;
  }
  EXPECT_GT(cudnn, 0u);
  EXPECT_GT(native, 0u);
  for (const MicrobenchCase& c : normCases(GridOptions{}))
    EXPECT_EQ(c.label.find("cudnn"), std::string::npos) << c.label;
}

TEST(Microbench, GemmShapesAreAsAsked) {
  const auto cases = gemmCases(GridOptions{});
  const core::Graph mm = findCase(cases, "mm m=64 n=128 k=32 float32").build();
  const core::Node& n = mm.node(core::selectTopLevelOps(mm).ops.at(0));
  EXPECT_EQ(n.name, "aten::mm");
  EXPECT_EQ(n.inputs[0].tensor->shape, (std::vector<int64_t>{64, 32}));
  EXPECT_EQ(n.inputs[1].tensor->shape, (std::vector<int64_t>{32, 128}));
  EXPECT_EQ(n.outputs[0].tensor->shape, (std::vector<int64_t>{64, 128}));
  const core::Graph lin = findCase(cases, "linear m=13 n=256 k=100 float32").build();
  const core::Node& l = lin.node(core::selectTopLevelOps(lin).ops.at(0));
  EXPECT_EQ(l.inputs[1].tensor->shape, (std::vector<int64_t>{256, 100}));  // weight [out, in]
  const core::Graph bmm = findCase(cases, "bmm b=8 m=9 n=16 k=4 float32").build();
  const core::Node& bn = bmm.node(core::selectTopLevelOps(bmm).ops.at(0));
  EXPECT_EQ(bn.outputs[0].tensor->shape, (std::vector<int64_t>{8, 9, 16}));
}

// On a CPU the GEMM grid reaches K and N of 4096 with a few rows: operands
// past the last-level cache, which the reference BLAS sweeps once per row,
// at a fraction of a second per point.
TEST(Microbench, CpuGemmGridReachesOperandsPastTheLastLevelCache) {
  const auto cases = gemmCases(GridOptions{});
  for (const char* kind : {"mm", "addmm", "linear"}) {
    const std::string label = std::string(kind) + " m=64 n=4096 k=4096 float32";
    const core::Graph g = findCase(cases, label).build();
    const core::Node& n = g.node(core::selectTopLevelOps(g).ops.at(0));
    const int64_t weight_bytes = n.inputs[kind == std::string("addmm") ? 2 : 1].tensor->numel * 4;
    EXPECT_EQ(weight_bytes, int64_t{64} << 20) << label;
    EXPECT_EQ(n.outputs[0].tensor->shape, (std::vector<int64_t>{64, 4096})) << label;
  }
  EXPECT_NO_THROW(findCase(cases, "linear m=16 n=2048 k=4096 float32"));
  EXPECT_THROW(findCase(cases, "mm m=512 n=4096 k=4096 float32"), std::runtime_error)
      << "few rows only: a point stays under a second";
}

TEST(Microbench, ConvOutputFollowsStrideAndPadding) {
  const auto cases = convCases(GridOptions{});
  const core::Graph g = findConv(cases, "conv2d n=2 c=16 k=32 hw=32 r=3 s=2", "float32").build();
  const auto ops = core::selectTopLevelOps(g).ops;
  const core::Node& fwd = g.node(ops.at(0));
  const core::Node& bwd = g.node(ops.at(1));
  EXPECT_EQ(fwd.name, "aten::conv2d");
  EXPECT_EQ(fwd.outputs[0].tensor->shape, (std::vector<int64_t>{2, 32, 16, 16}));  // (32+2-3)/2+1
  EXPECT_EQ(bwd.name, "aten::convolution_backward");
  EXPECT_EQ(bwd.inputs[0].tensor->shape, (std::vector<int64_t>{2, 32, 16, 16}));
  EXPECT_EQ(bwd.inputs[1].tensor->tensor_id, fwd.inputs[0].tensor->tensor_id);  // same input
}

TEST(Microbench, HalfBatchNormKeepsItsChannelStatisticsInFloat) {
  GridOptions grid;
  grid.device = "cuda";
  grid.dtypes = {core::DType::kFloat16};
  const auto cases = normCases(grid);
  const auto bn = std::find_if(cases.begin(), cases.end(), [](const MicrobenchCase& c) {
    return c.label.rfind("batch_norm", 0) == 0;
  });
  ASSERT_NE(bn, cases.end());
  const core::Graph g = bn->build();
  const auto ops = core::selectTopLevelOps(g).ops;
  const core::Node& bwd = g.node(ops.at(1));
  ASSERT_EQ(bwd.name, "aten::native_batch_norm_backward");
  EXPECT_EQ(bwd.inputs[1].tensor->dtype, core::DType::kFloat16) << "input";
  for (size_t i : {2, 3, 4, 5, 6}) {  // weight, running mean/var, saved mean/invstd
    EXPECT_EQ(bwd.inputs[i].tensor->dtype, core::DType::kFloat32) << "input " << i;
  }
  EXPECT_EQ(bwd.outputs[0].tensor->dtype, core::DType::kFloat16);
  EXPECT_EQ(bwd.outputs[1].tensor->dtype, core::DType::kFloat32);
}

TEST(Microbench, DepthwiseConvHasOneInputChannelPerFilter) {
  const auto cases = convCases(GridOptions{});
  const core::Graph g =
      findCase(cases, "conv2d n=2 c=64 k=64 hw=16 r=3 s=2 depthwise float32").build();
  const auto ops = core::selectTopLevelOps(g).ops;
  const core::Node& fwd = g.node(ops.at(0));
  EXPECT_EQ(fwd.inputs[1].tensor->shape, (std::vector<int64_t>{64, 1, 3, 3}));
  EXPECT_EQ(fwd.inputs[6].int_value, 64);  // groups
  EXPECT_EQ(fwd.outputs[0].tensor->shape, (std::vector<int64_t>{2, 64, 8, 8}));
  const core::Node& bwd = g.node(ops.at(1));
  EXPECT_EQ(bwd.inputs[9].int_value, 64);  // groups
  EXPECT_EQ(bwd.outputs[1].tensor->shape, (std::vector<int64_t>{64, 1, 3, 3}));
}

TEST(Microbench, TransposedConvGrowsTheMapAndItsBackwardSaysTransposed) {
  const auto cases = convCases(GridOptions{});
  const core::Graph g =
      findConv(cases, "conv_transpose2d n=4 c=32 k=16 hw=8 r=4 s=2", "float32").build();
  const auto ops = core::selectTopLevelOps(g).ops;
  const core::Node& fwd = g.node(ops.at(0));
  EXPECT_EQ(fwd.name, "aten::conv_transpose2d");
  EXPECT_EQ(fwd.inputs[1].tensor->shape, (std::vector<int64_t>{32, 16, 4, 4}));  // [in, out]
  EXPECT_EQ(fwd.outputs[0].tensor->shape, (std::vector<int64_t>{4, 16, 16, 16}));
  const core::Node& bwd = g.node(ops.at(1));
  EXPECT_EQ(bwd.name, "aten::convolution_backward");
  EXPECT_TRUE(bwd.inputs[7].bool_value);  // transposed
  EXPECT_EQ(bwd.inputs[0].tensor->shape, (std::vector<int64_t>{4, 16, 16, 16}));
  EXPECT_EQ(bwd.outputs[0].tensor->shape, (std::vector<int64_t>{4, 32, 8, 8}));
  // The predictor reads the same shapes back (predictors/kernels/feature_shapes.h).
  const predictors::ConvShape s = predictors::convShape(fwd);
  EXPECT_TRUE(s.transposed);
  EXPECT_DOUBLE_EQ(s.k, 16);
  EXPECT_DOUBLE_EQ(s.out_spatial, 256);
  EXPECT_DOUBLE_EQ(predictors::convShape(bwd).out_spatial, 256);
  // output_padding 1 on a 3x3 / 2 filter doubles the map too.
  const core::Graph o =
      findConv(cases, "conv_transpose2d n=1 c=64 k=32 hw=7 r=3 s=2 outpad", "float32").build();
  EXPECT_EQ(o.node(core::selectTopLevelOps(o).ops.at(0)).outputs[0].tensor->shape,
            (std::vector<int64_t>{1, 32, 14, 14}));
}

TEST(Microbench, ConvGridKeepsToRealisticLayers) {
  for (const MicrobenchCase& c : convCases(GridOptions{})) {
    const core::Graph g = c.build();
    const core::Node& fwd = g.node(core::selectTopLevelOps(g).ops.at(0));
    const auto& x = fwd.inputs[0].tensor->shape;
    const auto& w = fwd.inputs[1].tensor->shape;
    EXPECT_LE(x[1] * x[2] * x[3], 64 * 56 * 56) << c.label;
    if (x[1] != 3) {
      EXPECT_LE(w[0], 4 * x[1]) << c.label;
      EXPECT_LE(x[1], 4 * w[0]) << c.label;
    }
  }
}

// Every kind of layer comes with and without a bias: ResNet's 1x1 and 3x3
// convolutions at stride 1 have none, and their batch and maps are even.
TEST(Microbench, ConvBiasAlternatesWithinEveryFilterAndStride) {
  GridOptions gpu;
  gpu.accelerator = true;
  for (const GridOptions& grid : {GridOptions{}, gpu}) {
    // (filter, stride, transposed) -> {unbiased, biased} among even-sized layers.
    std::map<std::tuple<int64_t, int64_t, bool>, std::pair<int, int>> kinds;
    for (const MicrobenchCase& c : convCases(grid)) {
      if (c.label.find("depthwise") != std::string::npos) continue;
      const core::Graph g = c.build();
      const core::Node& fwd = g.node(core::selectTopLevelOps(g).ops.at(0));
      const auto& x = fwd.inputs[0].tensor->shape;
      const auto& w = fwd.inputs[1].tensor->shape;
      if (x[0] < 2 || x[0] % 2 || x[1] % 2 || x[2] % 2 || w[0] % 2 || w[1] % 2) continue;
      const bool transposed = fwd.name.find("transpose") != std::string::npos;
      const int64_t stride = fwd.inputs[3].elements.at(0).int_value;
      auto& [plain, biased] = kinds[{w[2], stride, transposed}];
      ++(fwd.inputs[2].isTensor() ? biased : plain);
    }
    ASSERT_FALSE(kinds.empty());
    for (const auto& [kind, counts] : kinds) {
      SCOPED_TRACE(::testing::Message()
                   << "filter " << std::get<0>(kind) << " stride " << std::get<1>(kind)
                   << " transposed " << std::get<2>(kind) << " gpu " << grid.accelerator);
      EXPECT_GT(counts.first, 0);
      EXPECT_GT(counts.second, 0);
    }
  }
}

TEST(Microbench, AdvancedIndexingSkipsTheFirstDimension) {
  const auto cases = copyCases(GridOptions{});
  const core::Graph g = findCase(cases, "index+index_put_ [128x9x9] float32").build();
  const auto ops = core::selectTopLevelOps(g).ops;
  const core::Node& index = g.node(ops.at(0));
  EXPECT_EQ(index.name, "aten::index");
  ASSERT_EQ(index.inputs[1].elements.size(), 3u);
  EXPECT_FALSE(index.inputs[1].elements[0].tensor->defined());
  EXPECT_EQ(index.inputs[1].elements[1].tensor->shape, (std::vector<int64_t>{36}));
  EXPECT_EQ(index.outputs[0].tensor->shape, (std::vector<int64_t>{128, 36}));
  const core::Node& put = g.node(ops.at(1));
  EXPECT_EQ(put.name, "aten::_index_put_impl_");
  EXPECT_TRUE(put.inputs[3].bool_value);  // accumulate, as IndexBackward0 records it
}

TEST(Microbench, EmbeddingBagRestrictsIndicesToTheHotRows) {
  const auto cases = embeddingCases(GridOptions{});
  const MicrobenchCase& c =
      findCase(cases, "embedding_bag b=128 rows=10000 d=16 l=10 hot=100 float32");
  const core::Graph g = c.build();
  const auto ops = core::selectTopLevelOps(g).ops;
  const core::Node& fwd = g.node(ops.at(0));
  const core::Node& bwd = g.node(ops.at(1));
  EXPECT_EQ(fwd.name, "aten::embedding_bag");
  EXPECT_EQ(fwd.tensor_range, "{\"1\": [0, 99]}");
  EXPECT_EQ(fwd.inputs[1].tensor->numel, 1280);
  EXPECT_EQ(bwd.name, "aten::_embedding_bag_backward");
  // The backward consumes the forward's own outputs (offset2bag, bag_size, max indices).
  EXPECT_EQ(bwd.inputs[3].tensor->tensor_id, fwd.outputs[1].tensor->tensor_id);
  EXPECT_EQ(bwd.inputs[6].int_value, 10000);
  ASSERT_EQ(c.index_reuse.size(), 8u);
  // 1280 lookups over 100 rows: lambda 12.8, nearly every row in (8,16].
  EXPECT_GT(c.index_reuse[4], 0.5);
}

// Zipf points over the whole table: no tensor_range narrower than the
// table, the Zipf histogram (far fewer distinct rows than uniform).
TEST(Microbench, EmbeddingBagHasZipfPoints) {
  const auto cases = embeddingCases(GridOptions{});
  const MicrobenchCase& z =
      findCase(cases, "embedding_bag b=512 rows=300000 d=32 l=20 zipf=1.05 float32");
  const MicrobenchCase& u =
      findCase(cases, "embedding_bag b=512 rows=300000 d=32 l=20 hot=300000 float32");
  EXPECT_DOUBLE_EQ(z.zipf, 1.05);
  EXPECT_DOUBLE_EQ(u.zipf, 0.0);
  const core::Graph g = z.build();
  EXPECT_EQ(g.node(core::selectTopLevelOps(g).ops.at(0)).tensor_range, "{\"1\": [0, 299999]}");
  EXPECT_TRUE(z.index_reuse.empty()) << "each measured row gets its own (replay_unit.cpp)";
  EXPECT_GT(predictors::uniqueFraction(u.index_reuse), 0.95);
}

// Tables past the last-level cache at production poolings are anchors, so
// that every calibration measures the lookups the grid's random sample may
// leave out: 2,048 bags of 40 and 80 over 64 MB tables, sparse (uniform and
// Zipf) and dense.
TEST(Microbench, EmbeddingBagAnchorsCacheMissingTablesAtLargePoolings) {
  const auto cases = embeddingCases(GridOptions{});
  std::vector<const MicrobenchCase*> anchors;
  for (const MicrobenchCase& c : cases)
    if (c.anchor) anchors.push_back(&c);
  EXPECT_EQ(anchors.size(), 18u);
  const MicrobenchCase& u =
      findCase(cases, "embedding_bag b=2048 rows=500000 d=32 l=80 hot=500000 sparse float32");
  const MicrobenchCase& z =
      findCase(cases, "embedding_bag b=2048 rows=1000000 d=16 l=40 zipf=1.05 sparse float32");
  const MicrobenchCase& d =
      findCase(cases, "embedding_bag b=2048 rows=250000 d=64 l=80 hot=250000 float32");
  for (const MicrobenchCase* c : {&u, &z, &d}) EXPECT_TRUE(c->anchor) << c->label;
  const core::Graph g = u.build();
  const core::Node& fwd = g.node(core::selectTopLevelOps(g).ops.at(0));
  EXPECT_EQ(fwd.inputs[1].tensor->numel, 2048 * 80);
  EXPECT_EQ(fwd.inputs[0].tensor->bytes(), 500000 * 32 * 4) << "past a 32 MiB last-level cache";
  EXPECT_DOUBLE_EQ(z.zipf, 1.05);
  EXPECT_FALSE(
      findCase(cases, "embedding_bag b=512 rows=300000 d=32 l=20 hot=300000 float32").anchor);
}

// Token embeddings at model widths (a language model's embedding and its
// dense backward), beside the DLRM grid's narrow tables.
TEST(Microbench, EmbeddingHasTokenEmbeddingsAtModelWidths) {
  const auto cases = embeddingCases(GridOptions{});
  const MicrobenchCase& t =
      findCase(cases, "embedding b=16 rows=8192 d=512 l=512 hot=8192 float32");
  const core::Graph g = t.build();
  const auto ops = core::selectTopLevelOps(g).ops;
  const core::Node& fwd = g.node(ops.at(0));
  const core::Node& bwd = g.node(ops.at(1));
  EXPECT_EQ(fwd.name, "aten::embedding");
  EXPECT_EQ(fwd.inputs[1].tensor->numel, 16 * 512);
  EXPECT_EQ(bwd.name, "aten::embedding_backward");
  EXPECT_EQ(bwd.inputs[2].int_value, 8192);
  EXPECT_EQ(bwd.outputs[0].tensor->numel, 8192 * 512);
  // 50,304 x 1,024 float32 tables (206 MB) are past the 128 MiB cap.
  for (const MicrobenchCase& c : cases)
    EXPECT_EQ(c.label.find("rows=50304 d=1024 l=128 hot=50304 float32"), std::string::npos);
}

TEST(Microbench, UnknownFamilyListsTheKnownOnes) {
  try {
    microbenchFamily("gemmm");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("gemmm"), std::string::npos);
    for (const std::string& n : microbenchFamilyNames())
      EXPECT_NE(what.find(n), std::string::npos) << n;
  }
}

TEST(Microbench, UniformReuseHistogramMatchesPoisson) {
  // lambda = 1: P(count = 1 | touched) = e^-1 / (1 - e^-1) = 0.58198.
  auto h = uniformReuseHistogram(1000000, 1000000);
  ASSERT_EQ(h.size(), 8u);
  EXPECT_NEAR(h[0], 0.58198, 1e-3);
  EXPECT_NEAR(std::accumulate(h.begin(), h.end(), 0.0), 1.0, 1e-9);
  // Few lookups over many rows: every touched row is touched once.
  EXPECT_NEAR(uniformReuseHistogram(100, 1000000)[0], 1.0, 1e-3);
  // 100k lookups on 64 rows: lambda ~1560, all in (64, inf).
  EXPECT_NEAR(uniformReuseHistogram(100000, 64)[7], 1.0, 1e-9);
}

TEST(Microbench, RepeatsAmortiseShortOps) {
  EXPECT_EQ(repeatsFor(5.0), 8);
  EXPECT_EQ(repeatsFor(100.0), 5);
  EXPECT_EQ(repeatsFor(10000.0), 1);
  EXPECT_EQ(matrixShape(4096), (std::vector<int64_t>{4, 1024}));
  EXPECT_EQ(matrixShape(300), (std::vector<int64_t>{75, 4}));
}

}  // namespace
}  // namespace tracetwin::calibration

namespace tracetwin::calibration {
namespace {

// Ops of the validation networks that no grid point measured before
// 2026-11-25, so the trees guessed them from other ops' kernels (the LSTMs'
// activation backwards, MobileNetV3's hard activations, and the
// nll_loss_backward of every classifier, predicted 10x its replayed time).
TEST(Microbench, GridsCoverActivationBackwardsHardActivationsAndNllLoss) {
  std::map<std::string, std::set<std::string>> ops_of;  // family -> op names on its grid
  for (const char* family : {"elementwise", "reduction"}) {
    for (const MicrobenchCase& c : microbenchFamily(family).cases(GridOptions{})) {
      const core::Graph g = c.build();
      for (const core::Node& n : g.nodes()) ops_of[family].insert(n.name);
    }
  }
  for (const char* op :
       {"aten::sigmoid_backward", "aten::tanh_backward", "aten::hardswish", "aten::hardswish_",
        "aten::hardswish_backward", "aten::hardsigmoid", "aten::hardsigmoid_backward"}) {
    EXPECT_EQ(ops_of["elementwise"].count(op), 1u) << op;
  }
  // A fill of its gradient, filed and measured with the elementwise ops.
  EXPECT_EQ(ops_of["elementwise"].count("aten::nll_loss_backward"), 1u);
  EXPECT_EQ(ops_of["reduction"].count("aten::nll_loss_backward"), 0u);
  EXPECT_EQ(core::opFamilyOfName("aten::nll_loss_backward"), "elementwise");
}

// Max pooling branches on its data: it pools a ReLU's output, as in the
// networks, not the uniform [-1, 1) fill an input of its own would get.
TEST(Microbench, MaxPoolingPoolsAReluOutput) {
  const auto cases = microbenchFamily("reduction").cases(GridOptions{});
  for (const char* label :
       {"max_pool2d [16x32x16x16] float32", "max_pool2d 3x3 pad 1 [16x32x16x16] float32"}) {
    SCOPED_TRACE(label);
    GraphBuilder b("cpu");
    findCase(cases, label).add_copy(b);
    const core::Graph g = b.build("one copy");
    std::map<int64_t, std::string> producer;  // storage -> op that wrote it
    int pools = 0;
    for (const core::Node& n : g.nodes()) {
      if (n.name == "aten::max_pool2d" || n.name == "aten::max_pool2d_with_indices") {
        ASSERT_TRUE(n.inputs.at(0).isTensor());
        const core::TensorValue& in = *n.inputs.at(0).tensor;
        EXPECT_EQ(producer[in.storage_id], "aten::relu") << n.name;
        ++pools;
      }
      for (const core::Value& v : n.outputs) {
        core::forEachTensor(v,
                            [&](const core::TensorValue& t) { producer[t.storage_id] = n.name; });
      }
    }
    EXPECT_EQ(pools, 2);
  }
}

}  // namespace
}  // namespace tracetwin::calibration
