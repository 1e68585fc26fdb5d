// `--malloc` of the measuring commands, end to end: pinned by default, glibc's
// own settings on request, recorded in the JSON report, bad values refused.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

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
}

TEST(HostMallocCli, UnknownValueIsAUsageError) {
  // Without tracetwin-replay, replay is unavailable (3) whatever its options.
  EXPECT_EQ(runQuietly("replay " + testing::dataPath("mlp.et.json.gz") + " --malloc jemalloc"),
            testing::replayHelperBuilt() ? 2 : 3);
}

}  // namespace
}  // namespace tracetwin
