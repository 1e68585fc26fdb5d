// cli/huge_page_heap.h: which command lines start again with glibc's heap
// in huge pages, how big a trace file is, and the environment put back.
#include "cli/huge_page_heap.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/support/traces.h"

namespace tracetwin::cli {
namespace {

constexpr uint64_t kBig = kHugePageHeapMinTraceBytes;

// A host in THP `madvise` mode with these files (bytes by path).
HeapSurroundings hostWith(std::map<std::string, uint64_t> files) {
  HeapSurroundings around;
  around.thp_enabled = "always [madvise] never";
  around.trace_bytes = [files](const std::string& path) {
    auto it = files.find(path);
    return it == files.end() ? uint64_t{0} : it->second;
  };
  return around;
}

TEST(HugePageHeap, ABigTraceOfACommandThatMeasuresNothing) {
  const HeapSurroundings around = hostWith({{"big.json", kBig}, {"small.json", kBig / 2}});
  EXPECT_TRUE(wantsHugePageHeap({"inspect", "big.json"}, around));
  EXPECT_TRUE(wantsHugePageHeap({"predict", "big.json", "--models", "m"}, around));
  EXPECT_TRUE(wantsHugePageHeap({"sweep", "--trace=big.json"}, around));
  EXPECT_TRUE(wantsHugePageHeap({"predict", "--ranks", "small.json,small.json"}, around))
      << "the ranks' traces together";
  EXPECT_FALSE(wantsHugePageHeap({"inspect", "small.json"}, around));
  EXPECT_FALSE(wantsHugePageHeap({"inspect", "missing.json"}, around));
  EXPECT_FALSE(wantsHugePageHeap({}, around));
}

TEST(HugePageHeap, NeverForMeasuringCommands) {
  const HeapSurroundings around = hostWith({{"big.json", kBig}});
  for (const char* command : {"replay", "compare", "calibrate", "host"}) {
    EXPECT_FALSE(wantsHugePageHeap({command, "big.json"}, around)) << command;
  }
}

TEST(HugePageHeap, NotWhereTheKernelOrTheUserSaysOtherwise) {
  HeapSurroundings around = hostWith({{"big.json", kBig}});
  const std::vector<std::string> args = {"inspect", "big.json"};
  around.thp_enabled = "always madvise [never]";
  EXPECT_FALSE(wantsHugePageHeap(args, around));
  around.thp_enabled = "[always] madvise never";
  EXPECT_FALSE(wantsHugePageHeap(args, around)) << "the heap has huge pages already";
  around.thp_enabled = "";
  EXPECT_FALSE(wantsHugePageHeap(args, around)) << "no THP at all";

  around = hostWith({{"big.json", kBig}});
  around.opt_out = "0";
  EXPECT_FALSE(wantsHugePageHeap(args, around));
  around.opt_out = "";
  around.glibc_tunables = "glibc.malloc.hugetlb=0";
  EXPECT_FALSE(wantsHugePageHeap(args, around)) << "the user chose";
  around.glibc_tunables = "glibc.malloc.check=3";
  EXPECT_TRUE(wantsHugePageHeap(args, around));
  around.ld_preload = "/usr/libexec/valgrind/vgpreload_core-amd64-linux.so";
  EXPECT_FALSE(wantsHugePageHeap(args, around)) << "callgrind would lose the process";
}

TEST(HugePageHeap, TraceBytesOfPlainAndGzipFiles) {
  testing::TempDir dir;
  const std::string plain = dir.path() + "/t.json";
  std::ofstream(plain) << std::string(1000, ' ');
  EXPECT_EQ(traceBytesOnDisk(plain), 1000u);
  // A gzip member whose trailer says 5,000,000 bytes (0x004C4B40).
  const std::string gz = dir.path() + "/t.json.gz";
  std::string bytes = "\x1f\x8b\x08";
  bytes += std::string(20, '\0');
  bytes += std::string("\x40\x4b\x4c\x00", 4);
  std::ofstream(gz, std::ios::binary) << bytes;
  EXPECT_EQ(traceBytesOnDisk(gz), 5000000u);
  EXPECT_EQ(traceBytesOnDisk(dir.path()), 0u) << "a directory";
  EXPECT_EQ(traceBytesOnDisk(dir.path() + "/missing"), 0u);
}

TEST(HugePageHeap, TheRestartedProcessPutsTheEnvironmentBack) {
  ASSERT_EQ(unsetenv("TRACETWIN_HEAP_REEXEC"), 0);
  EXPECT_FALSE(restoreEnvironmentAfterReexec()) << "not a restarted process";

  setenv("GLIBC_TUNABLES", "glibc.malloc.check=3:glibc.malloc.hugetlb=1", 1);
  setenv("TRACETWIN_HEAP_REEXEC", "=glibc.malloc.check=3", 1);
  EXPECT_TRUE(restoreEnvironmentAfterReexec());
  ASSERT_NE(getenv("GLIBC_TUNABLES"), nullptr);
  EXPECT_STREQ(getenv("GLIBC_TUNABLES"), "glibc.malloc.check=3");
  EXPECT_EQ(getenv("TRACETWIN_HEAP_REEXEC"), nullptr);

  setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);
  setenv("TRACETWIN_HEAP_REEXEC", "-", 1);
  EXPECT_TRUE(restoreEnvironmentAfterReexec());
  EXPECT_EQ(getenv("GLIBC_TUNABLES"), nullptr) << "there was none";
}

}  // namespace
}  // namespace tracetwin::cli
