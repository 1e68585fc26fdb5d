#include "calibration/host_probe.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace tracetwin::calibration {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text << "\n";
}

TEST(HostProbe, ReadsCachesClockAndMemoryFromSysfsAndProc) {
  const fs::path root = fs::temp_directory_path() / "tracetwin_calib_sysfs";
  fs::remove_all(root);
  const fs::path cpu = root / "cpu0";
  write(cpu / "cache/index0/level", "1");
  write(cpu / "cache/index0/type", "Data");
  write(cpu / "cache/index0/size", "32K");
  write(cpu / "cache/index1/level", "1");
  write(cpu / "cache/index1/type", "Instruction");
  write(cpu / "cache/index1/size", "32K");
  write(cpu / "cache/index2/level", "3");
  write(cpu / "cache/index2/type", "Unified");
  write(cpu / "cache/index2/size", "32768K");
  write(cpu / "cache/index3/level", "2");
  write(cpu / "cache/index3/type", "Unified");
  write(cpu / "cache/index3/size", "512K");
  write(cpu / "cpufreq/cpuinfo_max_freq", "3500000");
  write(root / "proc/cpuinfo",
        "processor\t: 0\nmodel name\t: Test CPU 9000\nmodel\t\t: 2\ncpu family\t: 26\n"
        "cpu MHz\t\t: 2000.0\n\nprocessor\t: 1\nmodel\t\t: 7");
  write(root / "proc/meminfo", "MemTotal:       1024 kB\nMemFree:        12 kB");

  const HostFacts f = readHostFacts(cpu.string(), (root / "proc").string());
  EXPECT_EQ(f.cpu_model, "Test CPU 9000");
  EXPECT_EQ(f.cpu_model_number, 2) << "'model', not the 'model name' line before it";
  EXPECT_EQ(f.cpu_family, 26);
  EXPECT_DOUBLE_EQ(f.clock_hz, 3.5e9);
  EXPECT_EQ(f.memory_bytes, 1024 * 1024);
  ASSERT_EQ(f.caches.size(), 3u);  // the instruction cache is left out
  EXPECT_EQ(f.caches[0].level, "L1");
  EXPECT_EQ(f.caches[0].bytes, 32 * 1024);
  EXPECT_EQ(f.caches[1].level, "L2");
  EXPECT_EQ(f.caches[2].bytes, int64_t{32} << 20);
  EXPECT_GE(f.logical_cpus, 1);

  // Without cpufreq the clock comes from /proc/cpuinfo.
  fs::remove_all(cpu / "cpufreq");
  EXPECT_DOUBLE_EQ(readHostFacts(cpu.string(), (root / "proc").string()).clock_hz, 2.0e9);
  fs::remove_all(root);
}

}  // namespace
}  // namespace tracetwin::calibration
