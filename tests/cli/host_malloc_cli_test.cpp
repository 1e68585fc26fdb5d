// `--malloc` of the measuring commands, end to end: pinned by default, glibc's
// own settings or the heap on request, recorded in the JSON report, bad
// values refused; what pinned and heap do to an output past 32 MiB.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/paths.h"
#include "tests/support/run.h"
#include "tests/support/traces.h"

namespace tracetwin {
namespace {

int runQuietly(const std::string& args) { return testing::runTracetwin(args).exit_code; }

// The replay report's host_malloc.
std::string hostMallocOfReplay(const std::string& malloc_flag) {
  testing::TempDir dir;
  const std::string json = dir.path() + "/r.json";
  const int code = runQuietly("replay " + testing::dataPath("mlp.et.json.gz") +
                              " --warmup 0 --iters 1 --json-out " + json + " " + malloc_flag);
  EXPECT_EQ(code, 0) << malloc_flag;
  std::ifstream in(json);
  return nlohmann::json::parse(in).value("host_malloc", "(missing)");
}

TEST(HostMallocCli, PinnedByDefaultAndDefaultOnRequest) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's allocator ignores mallopt: every run reports default";
#endif
  if (!testing::replayHelperBuilt()) GTEST_SKIP() << "replay is not in this build";
  EXPECT_EQ(hostMallocOfReplay(""), "pinned");
  EXPECT_EQ(hostMallocOfReplay("--malloc default"), "default");
  EXPECT_EQ(hostMallocOfReplay("--malloc pinned"), "pinned");
  EXPECT_EQ(hostMallocOfReplay("--malloc heap"), "heap");
  EXPECT_EQ(hostMallocOfReplay("--malloc caching"), "caching");
}

// Minor page faults of each measured iteration of a replay of one relu of a
// 40 MiB tensor (its output is allocated in every call and freed after it).
std::vector<int64_t> faultsOfBigRelu(const std::string& malloc_mode) {
  constexpr long kFloats = 10L << 20;
  testing::TempDir dir;
  const std::string trace =
      dir.write("relu.json", testing::modernTrace(testing::modernNode(
                                 3, 2, "aten::relu", "aten::relu(Tensor self) -> Tensor",
                                 fmt::format(R"([[43,7,0,{},4,"cpu"]])", kFloats),
                                 fmt::format("[[{}]]", kFloats), R"j(["Tensor(float)"])j")));
  const std::string json = dir.path() + "/r.json";
  const testing::CommandRun run = testing::runTracetwin(
      "replay " + trace + " --warmup 1 --iters 3 --malloc " + malloc_mode + " --json-out " + json);
  EXPECT_EQ(run.exit_code, 0) << run.output();
  std::ifstream in(json);
  return nlohmann::json::parse(in).value("page_faults", std::vector<int64_t>{});
}

// Pinned, the output is at the mmap threshold's ceiling and mapped fresh by
// every call: 10,240 pages faulted in per iteration (what the predictor
// charges, predictors/host/fresh_pages.h). Heap, memory faulted in up front
// serves it: what calibrate measures, so that its models leave the faults
// out. (Without that reserve the first two of these three faulted all
// 10,240 pages: the heap grew until its free chunks fit.) Caching, the
// warm-up's output, freed, is the next call's.
TEST(HostMallocCli, HeapAndCachingReuseTheOutputPinnedMapsFreshInEveryCall) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's allocator ignores mallopt";
#endif
#if !defined(__linux__)
  GTEST_SKIP() << "page faults are counted on Linux";
#endif
  if (!testing::replayHelperBuilt()) GTEST_SKIP() << "replay is not in this build";
  const std::vector<int64_t> pinned = faultsOfBigRelu("pinned");
  const std::vector<int64_t> heap = faultsOfBigRelu("heap");
  const std::vector<int64_t> caching = faultsOfBigRelu("caching");
  ASSERT_EQ(pinned.size(), 3u);
  ASSERT_EQ(heap.size(), 3u);
  ASSERT_EQ(caching.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_GE(pinned[i], 10240) << "iteration " << i;
    EXPECT_LT(heap[i], 1024) << "iteration " << i;
    EXPECT_LT(caching[i], 1024) << "iteration " << i;
  }
}

TEST(HostMallocCli, UnknownValueIsAUsageError) {
  // Without tracetwin-replay, replay is unavailable (3) whatever its options.
  EXPECT_EQ(runQuietly("replay " + testing::dataPath("mlp.et.json.gz") + " --malloc jemalloc"),
            testing::replayHelperBuilt() ? 2 : 3);
}

}  // namespace
}  // namespace tracetwin
