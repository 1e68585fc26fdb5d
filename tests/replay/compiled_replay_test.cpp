// replayGraph on a hand-built compiled region (an ATen op, an Inductor
// kernel writing into a buffer, an ATen op reading it) with a fake kernel
// device on this CPU host: the three modes, their order of preference,
// honest coverage, and stand-ins waiting on the host when there is no device.
#include <gtest/gtest.h>

#include "replay/compiled/kernel_device.h"
#include "replay/replayer.h"
#include "tests/replay/fake_inductor_cache.h"
#include "tests/support/graphs.h"

namespace tracetwin::replay {
namespace {

using testing::FakeInductorCache;
using testing::GraphBuilder;
using testing::intValue;
using testing::tensorValue;
using testing::tritonMetadata;

const char* kCompiledAdd = "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";
const char* kKernel = "triton_poi_fused_add_0";
const char* kFile = "cqq7oyz4hd5kjuvnn5l3fzbwlzbbrs4xbwsmdlu2ttmagnbhfvdb.py";
constexpr int64_t kNumel = 16;

// add -> kernel(in: its result, out: a buffer) -> add(the buffer).
core::Graph compiledRegion() {
  GraphBuilder b;
  b.op(kCompiledAdd, {tensorValue(1, 1, {kNumel}), tensorValue(2, 2, {kNumel}), intValue(1)},
       {tensorValue(3, 3, {kNumel})});
  b.triton(kKernel, kFile,
           {tensorValue(3, 3, {kNumel}), tensorValue(4, 4, {kNumel}), intValue(kNumel),
            intValue(140382148398488)});
  b.op(kCompiledAdd, {tensorValue(4, 4, {kNumel}), tensorValue(2, 2, {kNumel}), intValue(1)},
       {tensorValue(5, 5, {kNumel})});
  return b.build();
}

core::NodeId kernelId(const core::Graph& g) {
  for (const core::Node& n : g.nodes())
    if (n.category == core::NodeCategory::kTriton) return n.id;
  return core::kNoNode;
}

void writeCache(FakeInductorCache& dir) {
  const std::string bin = dir.binary("HASHA", kKernel, tritonMetadata(kKernel, 1));
  dir.manifest(fmt::format(
      R"({{"format": "tracetwin-inductor-kernels/1", "kernels": [{{"name": "{}", "kernel_file": "{}",
"binary_dir": "{}", "args": [["in_ptr0", "*fp32"], ["out_ptr0", "*fp32"], ["xnumel", "i32"],
["XBLOCK", "constexpr"]], "config": {{"XBLOCK": 8}}, "num_warps": 1, "grid_type": "Grid1D"}}]}})",
      kKernel, kFile, bin));
}

// Runs a "launched" kernel on the host (the replay's tensors are CPU ones):
// out[i] = in[i] + 1 over xnumel, which only works with the right pointers.
struct FakeDevice : compiled::KernelDevice {
  struct Log {
    int launches = 0;
    std::array<uint32_t, 3> grid{};
    int64_t xnumel = 0;
    std::vector<double> waits_us;
  };
  explicit FakeDevice(Log* log) : log(log) {}
  std::string describe() const override { return "fake device"; }
  compiled::KernelHandle load(const compiled::TritonBinary&) override { return this; }
  void launch(compiled::KernelHandle, const compiled::LaunchPlan& plan, void** params) override {
    ++log->launches;
    log->grid = plan.grid;
    const auto* in = *static_cast<float* const*>(params[0]);
    auto* out = *static_cast<float**>(params[1]);
    log->xnumel = *static_cast<const int64_t*>(params[2]);
    for (int64_t i = 0; i < log->xnumel; ++i) out[i] = in[i] + 1.0f;
  }
  void waitUs(double us) override { log->waits_us.push_back(us); }
  Log* log;
};

ReplayOptions withFakeDevice(FakeDevice::Log* log) {
  ReplayOptions o;
  o.warmup_iters = 0;
  o.measured_iters = 2;
  o.settle_iters = 0;
  o.make_kernel_device = [log] { return std::make_unique<FakeDevice>(log); };
  return o;
}

TEST(CompiledReplay, Mode1LaunchesTheCachedKernelWithTheReplaysTensorsAndCountsIt) {
  const core::Graph g = compiledRegion();
  FakeInductorCache dir;
  writeCache(dir);
  FakeDevice::Log log;
  ReplayOptions o = withFakeDevice(&log);
  o.inductor_cache = dir.path();
  o.recorded_device_us[kernelId(g)] = 250;  // mode 1 wins over mode 2
  const ReplayResult r = replayGraph(g, o);
  EXPECT_TRUE(r.failed.empty()) << r.failed.front().reason;
  EXPECT_EQ(r.replayed_ops, 3);
  EXPECT_DOUBLE_EQ(r.coverage, 1.0);
  EXPECT_EQ(log.launches, 2);  // once per iteration
  EXPECT_EQ(log.xnumel, kNumel);
  EXPECT_EQ(log.grid, (std::array<uint32_t, 3>{2, 1, 1}));
  EXPECT_TRUE(log.waits_us.empty());
  EXPECT_EQ(r.compiled.kernels, 1);
  EXPECT_EQ(r.compiled.launched, 1);
  EXPECT_EQ(r.compiled.recorded_standins, 0);
  EXPECT_EQ(r.compiled.waits_on, "fake device");
  EXPECT_TRUE(r.placeholders.empty());
}

TEST(CompiledReplay, Mode2WaitsOnTheDeviceForTheRecordedKernelTimeAndIsNotReplayed) {
  const core::Graph g = compiledRegion();
  FakeDevice::Log log;
  ReplayOptions o = withFakeDevice(&log);
  o.recorded_device_us[kernelId(g)] = 250;
  o.predicted_device_us[kernelId(g)] = 900;  // mode 2 wins over mode 3
  o.placeholder_us[kernelId(g)] = 4;         // the launch's recorded CPU time
  const ReplayResult r = replayGraph(g, o);
  EXPECT_EQ(r.replayed_ops, 2);
  EXPECT_NEAR(r.coverage, 2.0 / 3.0, 1e-12);
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_NE(r.skipped[0].reason.find("no Inductor cache given"), std::string::npos)
      << r.skipped[0].reason;
  EXPECT_EQ(log.launches, 0);
  EXPECT_EQ(log.waits_us, (std::vector<double>{250, 250}));
  ASSERT_EQ(r.placeholders.size(), 1u);
  EXPECT_EQ(r.placeholders[0].source, "recorded");
  EXPECT_DOUBLE_EQ(r.placeholders[0].device_us, 250);
  EXPECT_DOUBLE_EQ(r.placeholders[0].recorded_us, 4);
  EXPECT_EQ(r.compiled.recorded_standins, 1);
  EXPECT_DOUBLE_EQ(r.compiled.recorded_standin_us, 250);
  EXPECT_EQ(r.compiled.predicted_standins, 0);
}

TEST(CompiledReplay, Mode3StandsInForThePredictedTimeAndSaysSo) {
  const core::Graph g = compiledRegion();
  FakeInductorCache dir;  // a cache without this kernel
  dir.manifest(R"({"format": "tracetwin-inductor-kernels/1", "kernels": []})");
  FakeDevice::Log log;
  ReplayOptions o = withFakeDevice(&log);
  o.inductor_cache = dir.path();
  o.predicted_device_us[kernelId(g)] = 900;
  const ReplayResult r = replayGraph(g, o);
  EXPECT_EQ(r.replayed_ops, 2);
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_NE(r.skipped[0].reason.find("not in the Inductor cache"), std::string::npos)
      << r.skipped[0].reason;
  EXPECT_EQ(log.waits_us, (std::vector<double>{900, 900}));
  ASSERT_EQ(r.placeholders.size(), 1u);
  EXPECT_EQ(r.placeholders[0].source, "predicted");
  EXPECT_EQ(r.compiled.predicted_standins, 1);
  EXPECT_EQ(r.compiled.not_stood_in, 0);
}

TEST(CompiledReplay, AKernelWithNoTimeOfItsOwnIsCountedAsNotStoodIn) {
  const core::Graph g = compiledRegion();
  FakeDevice::Log log;
  const ReplayResult r = replayGraph(g, withFakeDevice(&log));
  EXPECT_EQ(r.compiled.not_stood_in, 1);
  EXPECT_TRUE(r.placeholders.empty());
  EXPECT_TRUE(log.waits_us.empty());
  EXPECT_EQ(r.skipped.size(), 1u);
}

// A CPU replay has no device: the kernel's time is spent on the host.
TEST(CompiledReplay, WithoutADeviceTheStandInWaitsOnTheHost) {
  const core::Graph g = compiledRegion();
  ReplayOptions o;
  o.warmup_iters = 0;
  o.measured_iters = 2;
  o.settle_iters = 0;
  o.recorded_device_us[kernelId(g)] = 20000;  // 20 ms: far above the two tiny adds
  const ReplayResult r = replayGraph(g, o);
  EXPECT_EQ(r.compiled.recorded_standins, 1);
  EXPECT_EQ(r.compiled.waits_on.rfind("host (busy wait): ", 0), 0u) << r.compiled.waits_on;
  for (double ms : r.iterations_ms) EXPECT_GE(ms, 20.0);
}

}  // namespace
}  // namespace tracetwin::replay
