// Replays real traces: the CPU traces captured by scripts/capture.py in data/
// (coverage, fidelity against the original run's meta file, memory) and the
// shared GPU ResNet traces planned for a CPU (coverage, substitutions, skips).
//
// Bounds are loose enough for a loaded 2-core CI machine and tight enough to
// catch a broken replay: a replay that drops or duplicates work, or runs
// with wrong thread counts, lands far outside 0.5-2x of the original.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <utility>
#include <vector>

#include "core/trace_reader.h"
#include "replay/replayer.h"
#include "replay/trace_meta.h"
#include "tests/test_paths.h"

namespace tracetwin::replay {
namespace {

constexpr double kMinCoverageCpu = 0.99;
constexpr double kMinCoverageGpuOnCpu = 0.95;
constexpr double kFidelityLow = 0.5;
constexpr double kFidelityHigh = 2.0;
constexpr double kMaxMemoryRatio = 1.2;

bool exists(const std::string& path) { return std::ifstream(path).good(); }

// The original workload timed again now, eagerly, with the captured
// parameters (scripts/workloads/<name>.py via Debian's python3-torch): on a
// shared 2-core machine the load of the moment moves both sides alike, while
// the capture's own figure may come from a quieter minute. Returns the best
// of 11 steps. nullopt when
// python3 with torch cannot run here (the meta file's figure is used then).
std::optional<double> eagerIterationMsNow(const std::string& name, const std::string& meta_path) {
  std::ifstream in(meta_path);
  auto meta = nlohmann::json::parse(in, nullptr, false);
  if (!meta.is_object() || !meta.contains("params")) return std::nullopt;
  const std::string scripts = tracetwin::testing::sourcePath("scripts");
  const std::string code =
      "import sys, json, time, importlib\n"
      "sys.path[:0] = ['" +
      scripts + "/workloads', '" + scripts +
      "']\n"
      "import torch\n"
      "torch.set_num_threads(" +
      std::to_string(meta.value("threads", 1)) +
      ")\n"
      "p = json.loads(sys.argv[1]); torch.manual_seed(p.get('seed', 0))\n"
      "step = importlib.import_module('" +
      name +
      "').build(p)\n"
      "for _ in range(3): step()\n"
      "s = []\n"
      "for _ in range(11):\n"
      "    t = time.perf_counter(); step(); s.append((time.perf_counter() - t) * 1e3)\n"
      "print(min(s))\n";
  const std::string cmd =
      "/usr/bin/python3 -c \"" + code + "\" '" + meta["params"].dump() + "' 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  double ms = 0;
  if (pipe && std::fscanf(pipe.get(), "%lf", &ms) == 1 && ms > 0) return ms;
  return std::nullopt;
}

std::string thisCpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    const size_t start = line.find_first_not_of(" \t", colon + 1);
    if (start == std::string::npos) return "";
    return line.substr(start, line.find_last_not_of(" \t\r") + 1 - start);
  }
  return "";
}

class DataTrace : public ::testing::TestWithParam<const char*> {};

TEST_P(DataTrace, ReplaysWithFullCoverageCloseToTheOriginal) {
  const std::string path = tracetwin::testing::dataPath(std::string(GetParam()) + ".et.json.gz");
  if (!exists(path)) GTEST_SKIP() << path << " not captured (scripts/make-data.sh)";
  const core::Graph graph = core::readTrace(path);
  ReplayOptions options;
  options.warmup_iters = 2;
  options.measured_iters = 5;
  const ReplayResult r = replayGraph(graph, options);

  EXPECT_GE(r.coverage, kMinCoverageCpu);
  EXPECT_TRUE(r.failed.empty()) << r.failed.front().name << ": " << r.failed.front().reason;
  ASSERT_GT(r.trace_peak_bytes, 0);
  EXPECT_LE(double(r.peak_memory_bytes), kMaxMemoryRatio * double(r.trace_peak_bytes));

  auto meta = readTraceMeta(path);
  ASSERT_TRUE(meta) << "capture.py writes a meta file beside each trace";
  EXPECT_EQ(r.threads, meta->threads) << "the replay runs at the original thread count";
  // Best of each side: the fastest iteration is what the load of the moment
  // (ctest -j runs other suites beside this one) disturbs least.
  const double replay_ms = *std::min_element(r.iterations_ms.begin(), r.iterations_ms.end());
  const auto eager_now = eagerIterationMsNow(GetParam(), meta->path);
  // Without an eager re-run here, the meta file's time is the only original,
  // and it means something only on the machine that captured it.
  if (!eager_now && !meta->cpu_model.empty() && meta->cpu_model != thisCpuModel()) {
    GTEST_SKIP() << "the original time was measured on '" << meta->cpu_model << "', this is '"
                 << thisCpuModel() << "', and no eager PyTorch here can re-run it";
  }
  const double original_ms = eager_now.value_or(meta->iteration_ms);
  const double ratio = replay_ms / original_ms;
  RecordProperty("fidelity_ratio", std::to_string(ratio));
  std::printf("  %s: replay %.3f ms, original %.3f ms (%s), ratio %.3f; captured %.3f ms\n",
              GetParam(), replay_ms, original_ms, eager_now ? "eager, now" : "meta file", ratio,
              meta->iteration_ms);
  EXPECT_GE(ratio, kFidelityLow) << "replay " << replay_ms << " ms vs original " << original_ms;
  EXPECT_LE(ratio, kFidelityHigh) << "replay " << replay_ms << " ms vs original " << original_ms;
}

INSTANTIATE_TEST_SUITE_P(Captured, DataTrace,
                         ::testing::Values("mlp", "cnn", "embbag", "transformer", "resnet18_small",
                                           "adds5k"));

class GpuTraceOnCpu : public ::testing::TestWithParam<const char*> {};

TEST_P(GpuTraceOnCpu, PlansNearlyEveryOpWithGenericTwins) {
  const core::Graph graph = core::readTrace(tracetwin::testing::sharedTrace(GetParam()));
  ReplayOptions options;
  options.plan_only = true;  // a batch-32 ResNet-50 iteration takes minutes on 2 cores
  const ReplayResult r = replayGraph(graph, options);
  EXPECT_EQ(r.selected_ops, 1237);
  EXPECT_GE(r.coverage, kMinCoverageGpuOnCpu);
  // 53 cudnn_batch_norm_backward at top level, each replaced and reported.
  const auto bn = std::count_if(r.substitutions.begin(), r.substitutions.end(), [](const auto& s) {
    return s.from == "aten::cudnn_batch_norm_backward" &&
           s.to == "aten::native_batch_norm_backward";
  });
  EXPECT_EQ(bn, 53);
  // What is left is the 9 collectives, each with its reason.
  for (const OpIssue& s : r.skipped) {
    EXPECT_EQ(s.name, "record_param_comms") << s.reason;
    EXPECT_FALSE(s.reason.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(Shared, GpuTraceOnCpu,
                         ::testing::Values("resnet_1.0.3_et.json.gz", "resnet_1.1.0_et.json.gz"));

// Traces captured on an H100 with PyTorch 2.11 (data/h100/README.md): a GPU
// and a PyTorch newer than this LibTorch. Every op either plans, with its
// cuDNN twin where it has one, or is skipped with the reason expected here.
struct NewerGpuTrace {
  const char* name;
  int64_t selected;
  std::vector<std::pair<std::string, std::string>> skipped;  // op name, part of the reason
};

void PrintTo(const NewerGpuTrace& t, std::ostream* os) { *os << t.name; }

class NewerTorchGpuTraceOnCpu : public ::testing::TestWithParam<NewerGpuTrace> {};

TEST_P(NewerTorchGpuTraceOnCpu, PlansEveryOpItCanAndSaysWhyNotForTheRest) {
  const NewerGpuTrace& want = GetParam();
  const core::Graph graph =
      core::readTrace(tracetwin::testing::dataPath(std::string("h100/") + want.name + ".et.json.gz"));
  ReplayOptions options;
  options.plan_only = true;  // 4096-wide GEMMs take minutes on this CPU
  const ReplayResult r = replayGraph(graph, options);
  EXPECT_EQ(r.selected_ops, want.selected);
  ASSERT_EQ(r.skipped.size(), want.skipped.size());
  for (size_t i = 0; i < want.skipped.size(); ++i) {
    EXPECT_EQ(r.skipped[i].name, want.skipped[i].first);
    EXPECT_NE(r.skipped[i].reason.find(want.skipped[i].second), std::string::npos)
        << r.skipped[i].reason;
  }
  EXPECT_TRUE(r.failed.empty());
  for (const Substitution& s : r.substitutions) EXPECT_EQ(s.from.rfind("aten::cudnn_", 0), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    H100Torch211, NewerTorchGpuTraceOnCpu,
    ::testing::Values(
        NewerGpuTrace{"mlp_big", 55, {}}, NewerGpuTrace{"cnn_big", 46, {}},
        NewerGpuTrace{"transformer_big",
                      175,
                      {{"aten::scaled_dot_product_attention", "not registered in this LibTorch"},
                       {"aten::_scaled_dot_product_efficient_attention_backward",
                        "not registered in this LibTorch"},
                       {"aten::_foreach_lerp_", "not registered in this LibTorch"}}},
        NewerGpuTrace{"lstm",
                      65,
                      {{"aten::_cudnn_rnn_backward", "--device cuda"},
                       {"aten::_foreach_lerp_", "not registered in this LibTorch"}}}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace tracetwin::replay
