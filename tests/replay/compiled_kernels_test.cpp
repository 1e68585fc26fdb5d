// Mode 1 of compiled-step replay without a GPU: Inductor kernel sources read,
// kernels found in a fake cache directory (with and without the manifest of
// capture.py --compile), and a trace's Triton node - the shared PT2 trace's
// and hand-built ones - bound to its kernel's parameters and grid.
#include "replay/compiled/compiled_kernels.h"

#include <gtest/gtest.h>

#include <cstring>

#include "core/errors.h"
#include "core/trace_reader.h"
#include "replay/compiled/inductor_cache.h"
#include "replay/compiled/inductor_source.h"
#include "replay/compiled/launch_layout.h"
#include "tests/replay/fake_inductor_cache.h"
#include "tests/support/graphs.h"
#include "tests/support/paths.h"

namespace tracetwin::replay::compiled {
namespace {

using testing::FakeInductorCache;
using testing::inductorSource;
using testing::intValue;
using testing::tensorValue;
using testing::tritonMetadata;

// The shared trace's kernel, as Inductor would have written it.
const char* kPt2Kernel = "triton_poi_fused_add_cos_neg_sin_0";
const char* kPt2File = "cm742fnyrs4e65orusgacb3ex55efiixw4flktezbgqlge5nvorn.py";
const char* kPt2Signature =
    "{'in_ptr0': '*fp32', 'in_ptr1': '*fp32', 'out_ptr0': '*fp32', 'out_ptr1': '*fp32', "
    "'xnumel': 'i32', 'XBLOCK': 'constexpr'}";
const char* kPt2Args = "in_ptr0, in_ptr1, out_ptr0, out_ptr1, xnumel, XBLOCK : tl.constexpr";

std::string pt2Source() { return inductorSource(kPt2Kernel, kPt2Signature, kPt2Args); }

std::string manifestFor(const std::string& binary_dir, int xblock, int warps) {
  return fmt::format(
      R"({{"format": "tracetwin-inductor-kernels/1", "kernels": [{{"name": "{}", "kernel_file": "{}",
"binary_dir": "{}", "args": [["in_ptr0", "*fp32"], ["in_ptr1", "*fp32"], ["out_ptr0", "*fp32"],
["out_ptr1", "*fp32"], ["xnumel", "i32"], ["XBLOCK", "constexpr"]], "constants": [],
"config": {{"XBLOCK": {}}}, "num_warps": {}, "grid_type": "Grid1D"}}]}})",
      kPt2Kernel, kPt2File, binary_dir, xblock, warps);
}

const core::Node& pt2KernelNode(const core::Graph& g) {
  for (const core::Node& n : g.nodes()) {
    if (n.category == core::NodeCategory::kTriton) return n;
  }
  throw std::runtime_error("no Triton node in the pt2 trace");
}

// --- the kernel source ------------------------------------------------------

TEST(InductorSource, ReadsArgumentsTypesAndGridOfARecentKernelFile) {
  const InductorKernelSource s = parseInductorKernelSource(pt2Source(), "k.py");
  EXPECT_EQ(s.kernel_name, kPt2Kernel);
  EXPECT_EQ(s.heuristic, "pointwise");
  EXPECT_EQ(s.grid_type, "Grid1D");
  ASSERT_EQ(s.args.size(), 6u);
  EXPECT_EQ(s.args[0].name, "in_ptr0");
  EXPECT_EQ(s.args[0].type, "*fp32");
  EXPECT_EQ(s.args[4].type, "i32");
  EXPECT_EQ(s.args[5].name, "XBLOCK");
  EXPECT_EQ(s.args[5].type, "constexpr");
  EXPECT_TRUE(s.constants.empty());
}

// PyTorch 2.1-2.4: signature and constants keyed by position, constexprs left out.
TEST(InductorSource, ReadsTheOlderPositionalSignature) {
  std::string text =
      inductorSource("triton_poi_fused_relu_0", "{0: '*fp32', 1: '*fp32', 2: 'i32'}",
                     "in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr", "", "{2: 1}");
  const InductorKernelSource s = parseInductorKernelSource(text, "old.py");
  ASSERT_EQ(s.args.size(), 4u);
  EXPECT_EQ(s.args[1].type, "*fp32");
  EXPECT_EQ(s.args[3].type, "constexpr");  // from the annotation
  EXPECT_EQ(s.constants.count("xnumel"), 1u);
  EXPECT_EQ(s.grid_type, "");
}

TEST(InductorSource, AFileWithoutASignatureIsRefusedByName) {
  try {
    parseInductorKernelSource("@triton.jit\ndef k(a):\n  pass\n", "/cache/x.py");
    FAIL() << "no error";
  } catch (const SourceFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("/cache/x.py"), std::string::npos) << e.what();
  }
}

// --- finding the kernel in the cache ----------------------------------------

TEST(InductorCache, TheManifestNamesTheBinaryAndTheConfig) {
  FakeInductorCache dir;
  dir.source(kPt2File, pt2Source());
  const std::string bin = dir.binary("HASHA", kPt2Kernel, tritonMetadata(kPt2Kernel, 2));
  dir.binary("HASHB", kPt2Kernel, tritonMetadata(kPt2Kernel, 2));  // another config's build
  dir.manifest(manifestFor(bin, 8, 2));
  const InductorCache cache = InductorCache::open(dir.path());
  EXPECT_TRUE(cache.hasManifest());
  EXPECT_EQ(cache.binaryCount(), 2u);
  std::string why;
  auto spec = cache.find(kPt2Kernel, kPt2File, &why);
  ASSERT_TRUE(spec) << why;
  EXPECT_EQ(spec->found_by, "manifest");
  EXPECT_EQ(spec->block_sizes.at("XBLOCK"), 8);
  EXPECT_NE(spec->binary.cubin_path.find("HASHA"), std::string::npos);
  EXPECT_EQ(spec->binary.num_warps, 2);
  EXPECT_TRUE(spec->binary.global_scratch_param);
  EXPECT_TRUE(spec->binary.profile_scratch_param);
}

TEST(InductorCache, WithoutTheManifestTheSourceBestConfigAndBinaryAreMatched) {
  FakeInductorCache dir;
  dir.source(kPt2File, pt2Source());
  dir.bestConfig(kPt2File,
                 R"({"XBLOCK": 16, "num_warps": 1, "num_stages": 1, "configs_hash": "x"})");
  dir.binary("HASHA", kPt2Kernel, tritonMetadata(kPt2Kernel, 1));
  dir.binary("HASHB", kPt2Kernel, tritonMetadata(kPt2Kernel, 4));  // the other candidate
  std::string why;
  auto spec = InductorCache::open(dir.path()).find(kPt2Kernel, kPt2File, &why);
  ASSERT_TRUE(spec) << why;
  EXPECT_EQ(spec->found_by, "source+best_config");
  EXPECT_EQ(spec->block_sizes.size(), 1u);  // num_warps, num_stages are no block sizes
  EXPECT_EQ(spec->block_sizes.at("XBLOCK"), 16);
  EXPECT_NE(spec->binary.cubin_path.find("HASHA"), std::string::npos);
}

TEST(InductorCache, AKernelThatWasNotAutotunedNeedsTheManifest) {
  FakeInductorCache dir;
  dir.source(kPt2File, pt2Source());
  dir.binary("HASHA", kPt2Kernel, tritonMetadata(kPt2Kernel, 1));
  std::string why;
  EXPECT_FALSE(InductorCache::open(dir.path()).find(kPt2Kernel, kPt2File, &why));
  EXPECT_NE(why.find("capture.py --compile"), std::string::npos) << why;
}

TEST(InductorCache, TwoBinariesThatFitAreAmbiguousUnlessTheConfigNamesItsHash) {
  FakeInductorCache dir;
  dir.source(kPt2File, pt2Source());
  dir.binary("HASHA", kPt2Kernel, tritonMetadata(kPt2Kernel, 1));
  dir.binary("HASHB", kPt2Kernel, tritonMetadata(kPt2Kernel, 1));
  dir.bestConfig(kPt2File, R"({"XBLOCK": 16, "num_warps": 1})");
  std::string why;
  EXPECT_FALSE(InductorCache::open(dir.path()).find(kPt2Kernel, kPt2File, &why));
  EXPECT_NE(why.find("2 compiled binaries"), std::string::npos) << why;
  dir.bestConfig(kPt2File, R"({"XBLOCK": 16, "num_warps": 1, "triton_cache_hash": "HASHB"})");
  auto spec = InductorCache::open(dir.path()).find(kPt2Kernel, kPt2File, &why);
  ASSERT_TRUE(spec) << why;
  EXPECT_NE(spec->binary.cubin_path.find("HASHB"), std::string::npos);
}

TEST(InductorCache, KernelsCuLaunchKernelCannotLaunchAsBuiltAreRefusedWithTheReason) {
  FakeInductorCache dir;
  const std::string bin =
      dir.binary("HASHA", kPt2Kernel,
                 tritonMetadata(kPt2Kernel, 1, 0, R"(, "tensordesc_meta": [{"block": [64, 64]}])"));
  dir.manifest(manifestFor(bin, 16, 1));
  std::string why;
  EXPECT_FALSE(InductorCache::open(dir.path()).find(kPt2Kernel, kPt2File, &why));
  EXPECT_NE(why.find("TMA"), std::string::npos) << why;
  // Scratch memory Triton would allocate per launch.
  const TritonBinary b = readTritonBinary(
      dir.path() + "/" + dir.binary("HASHC", "k", R"({"name": "k", "num_warps": 4, "shared": 0,
"global_scratch_size": 256})") +
          "/k.json",
      "k.cubin");
  EXPECT_NE(b.unsupported.find("256 bytes of global_scratch_size"), std::string::npos)
      << b.unsupported;
}

TEST(InductorCache, KernelsMissingFromTheCacheSayWhere) {
  FakeInductorCache dir;
  std::string why;
  EXPECT_FALSE(InductorCache::open(dir.path()).find(kPt2Kernel, kPt2File, &why));
  EXPECT_NE(why.find("not in the Inductor cache"), std::string::npos) << why;
}

TEST(InductorCache, ABadManifestOrDirectoryIsAnInputError) {
  FakeInductorCache dir;
  dir.manifest(R"({"format": "something-else", "kernels": []})");
  EXPECT_THROW(InductorCache::open(dir.path()), InputError);
  dir.manifest(R"({"format": "tracetwin-inductor-kernels/1", "kernels": [{"name": 3}]})");
  try {
    InductorCache::open(dir.path());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("kernels[0]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(InductorCache::open(dir.path() + "/nowhere"), InputError);
}

// --- binding the trace's values ---------------------------------------------

CompiledKernelSpec pt2Spec(int xblock) {
  CompiledKernelSpec s;
  s.name = kPt2Kernel;
  s.args = parseInductorKernelSource(pt2Source(), "k.py").args;
  s.block_sizes["XBLOCK"] = xblock;
  s.grid_type = "Grid1D";
  s.binary.name = kPt2Kernel;
  s.binary.num_warps = 1;
  s.binary.global_scratch_param = true;
  s.binary.profile_scratch_param = true;
  return s;
}

TEST(LaunchLayout, TheSharedPt2KernelBindsItsTensorsNumelAndScratch) {
  const core::Graph g = core::readTrace(testing::sharedTrace("pt2_triton_1.1.1_et.json.gz"));
  const core::Node& node = pt2KernelNode(g);
  const LaunchPlan plan = planLaunch(pt2Spec(8), node);
  // Four pointers, xnumel, then the two scratch pointers; the stream is not a parameter.
  ASSERT_EQ(plan.params.size(), 7u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(plan.params[size_t(i)].kind, LaunchParam::Kind::kTensor);
    EXPECT_EQ(plan.params[size_t(i)].tensor, i);
  }
  EXPECT_EQ(plan.params[4].kind, LaunchParam::Kind::kScalar);
  EXPECT_EQ(plan.params[4].bits, 16u);
  EXPECT_EQ(plan.params[5].kind, LaunchParam::Kind::kNull);
  EXPECT_EQ(plan.params[6].kind, LaunchParam::Kind::kNull);
  EXPECT_EQ(plan.grid, (std::array<uint32_t, 3>{2, 1, 1}));  // 16 elements, 8 per program
  EXPECT_EQ(plan.block_x, 32u);
  EXPECT_FALSE(plan.empty);
  EXPECT_EQ(planLaunch(pt2Spec(1024), node).grid[0], 1u);
}

TEST(LaunchLayout, ValuesThatDoNotFitTheKernelAreRefused) {
  const core::Graph g = core::readTrace(testing::sharedTrace("pt2_triton_1.1.1_et.json.gz"));
  const core::Node& node = pt2KernelNode(g);
  CompiledKernelSpec half = pt2Spec(8);
  half.args[2].type = "*fp16";
  try {
    planLaunch(half, node);
    FAIL() << "no error";
  } catch (const LayoutError& e) {
    EXPECT_NE(std::string(e.what()).find("*fp16 pointer, but the tensor is float32"),
              std::string::npos)
        << e.what();
  }
  CompiledKernelSpec more = pt2Spec(8);
  more.args.insert(more.args.begin(), {"in_ptr9", "*fp32"});
  more.args.insert(more.args.begin(), {"in_ptr8", "*fp32"});
  more.args.insert(more.args.begin(), {"in_ptr7", "*fp32"});
  EXPECT_THROW(planLaunch(more, node), LayoutError);
  CompiledKernelSpec no_block = pt2Spec(8);
  no_block.block_sizes.clear();
  EXPECT_THROW(planLaunch(no_block, node), LayoutError);
}

core::Node handNode(std::vector<core::Value> inputs) {
  core::Node n;
  n.id = 7;
  n.name = "triton_poi_fused_k_0";
  n.kernel_backend = "triton";
  n.inputs = std::move(inputs);
  return n;
}

TEST(LaunchLayout, ConstantsAreNoParametersButStillSizeTheGrid) {
  CompiledKernelSpec s;
  s.name = "triton_poi_fused_k_0";
  s.args = {{"in_ptr0", "*fp32"}, {"scale", "fp32"}, {"xnumel", "i32"}, {"XBLOCK", "constexpr"}};
  s.constants = {"xnumel"};
  s.block_sizes["XBLOCK"] = 4;
  s.binary.num_warps = 4;
  const core::Node n =
      handNode({tensorValue(1, 1, {1}), testing::doubleValue(0.5), intValue(1), intValue(99)});
  const LaunchPlan plan = planLaunch(s, n);
  ASSERT_EQ(plan.params.size(), 2u);
  float scale = 0;
  const auto bits = static_cast<uint32_t>(plan.params[1].bits);
  std::memcpy(&scale, &bits, 4);
  EXPECT_EQ(scale, 0.5f);
  EXPECT_EQ(plan.grid[0], 1u);
  EXPECT_EQ(plan.block_x, 128u);
}

TEST(LaunchLayout, TwoDimensionalGridsSpillYIntoZBeyondCudasLimit) {
  CompiledKernelSpec s;
  s.name = "triton_poi_fused_k_0";
  s.args = {{"in_ptr0", "*fp32"},
            {"ynumel", "i32"},
            {"xnumel", "i32"},
            {"YBLOCK", "constexpr"},
            {"XBLOCK", "constexpr"}};
  s.block_sizes = {{"XBLOCK", 32}, {"YBLOCK", 1}};
  s.binary.num_warps = 4;
  s.grid_type = "Grid2D";
  const core::Node n =
      handNode({tensorValue(1, 1, {64}), intValue(1000), intValue(64), intValue(3)});
  EXPECT_EQ(planLaunch(s, n).grid, (std::array<uint32_t, 3>{2, 1000, 1}));
  s.grid_type = "Grid2DWithYZOverflow";
  const core::Node big =
      handNode({tensorValue(1, 1, {64}), intValue(200000), intValue(64), intValue(3)});
  // 200,000 y blocks: 4 z slices of 50,000.
  EXPECT_EQ(planLaunch(s, big).grid, (std::array<uint32_t, 3>{2, 50000, 4}));
  s.grid_type = "Grid2D";
  EXPECT_THROW(planLaunch(s, big), LayoutError);  // 200,000 > 65,535
  s.grid_type = "CooperativeReductionGrid";
  EXPECT_THROW(planLaunch(s, n), LayoutError);
}

// --- the planner with a fake device -----------------------------------------

class CountingDevice : public KernelDevice {
 public:
  std::string describe() const override { return "fake"; }
  KernelHandle load(const TritonBinary& b) override {
    ++loads;
    last_binary = b.cubin_path;
    return this;
  }
  void launch(KernelHandle, const LaunchPlan&, void**) override {}
  void waitUs(double) override {}
  int loads = 0;
  std::string last_binary;
};

TEST(CompiledKernels, PreparesTheLaunchOrSaysWhyNot) {
  const core::Graph g = core::readTrace(testing::sharedTrace("pt2_triton_1.1.1_et.json.gz"));
  const core::Node& node = pt2KernelNode(g);
  FakeInductorCache dir;
  dir.manifest(manifestFor(dir.binary("HASHA", kPt2Kernel, tritonMetadata(kPt2Kernel, 1)), 8, 1));
  auto cache = std::make_shared<const InductorCache>(InductorCache::open(dir.path()));
  CountingDevice* device = nullptr;
  CompiledKernels kernels(cache, [&device] {
    auto d = std::make_unique<CountingDevice>();
    device = d.get();
    return d;
  });
  std::string why;
  auto launch = kernels.prepare(node, &why);
  ASSERT_TRUE(launch) << why;
  EXPECT_EQ(launch->plan.grid[0], 2u);
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(device->loads, 1);

  CompiledKernels no_cache(nullptr, [] { return std::make_unique<CountingDevice>(); });
  EXPECT_FALSE(no_cache.prepare(node, &why));
  EXPECT_NE(why.find("--inductor-cache"), std::string::npos) << why;

  CompiledKernels no_device(cache, []() -> std::unique_ptr<KernelDevice> {
    throw UnavailableError("no CUDA device: test");
  });
  EXPECT_FALSE(no_device.prepare(node, &why));
  EXPECT_EQ(why, "no CUDA device: test");
  EXPECT_EQ(no_device.device(), nullptr);
}

}  // namespace
}  // namespace tracetwin::replay::compiled
