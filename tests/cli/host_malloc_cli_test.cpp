// `--malloc` of the measuring commands, end to end: pinned by default, glibc's
// own settings on request, recorded in the JSON report, bad values refused.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/paths.h"
#include "tests/support/traces.h"

namespace tracetwin {
namespace {

int runQuietly(const std::string& args) {
  const std::string cmd = testing::tracetwinBinary() + " " + args + " >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The replay report's host_malloc, or "" when replay is not in this build.
std::string hostMallocOfReplay(const std::string& malloc_flag) {
  testing::TempDir dir;
  const std::string json = dir.path() + "/r.json";
  const int code = runQuietly("replay " + testing::dataPath("mlp.et.json.gz") +
                              " --warmup 0 --iters 1 --json-out " + json + " " + malloc_flag);
  if (code == 3) return "";  // built without LibTorch: exit 3, unavailable
  EXPECT_EQ(code, 0) << malloc_flag;
  std::ifstream in(json);
  return nlohmann::json::parse(in).value("host_malloc", "(missing)");
}

TEST(HostMallocCli, PinnedByDefaultAndDefaultOnRequest) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's allocator ignores mallopt: every run reports default";
#endif
  const std::string pinned = hostMallocOfReplay("");
  if (pinned.empty()) GTEST_SKIP() << "replay is not in this build";
  EXPECT_EQ(pinned, "pinned");
  EXPECT_EQ(hostMallocOfReplay("--malloc default"), "default");
  EXPECT_EQ(hostMallocOfReplay("--malloc pinned"), "pinned");
}

TEST(HostMallocCli, UnknownValueIsAUsageError) {
  EXPECT_EQ(runQuietly("replay " + testing::dataPath("mlp.et.json.gz") + " --malloc jemalloc"), 2);
}

}  // namespace
}  // namespace tracetwin
