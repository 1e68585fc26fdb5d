#include "calibration/host_facts.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace tracetwin::calibration {
namespace {

std::string readFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  return line;
}

// "32K", "1024K", "32M" (sysfs cache sizes) -> bytes; 0 when unreadable.
int64_t parseSize(const std::string& text) {
  if (text.empty()) return 0;
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    return 0;
  }
  const char unit = used < text.size() ? text[used] : ' ';
  if (unit == 'K') return value << 10;
  if (unit == 'M') return value << 20;
  if (unit == 'G') return value << 30;
  return value;
}

// Value of the first "key : value" line of a /proc file whose key is `key`
// ("model" must not match "model name").
std::string procField(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (line.find_first_not_of(" \t", key.size()) != colon) continue;
    std::string v = line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    return v;
  }
  return {};
}

std::vector<predictors::CacheSpec> readCaches(const std::string& cpu_dir) {
  std::vector<predictors::CacheSpec> caches;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = fmt::format("{}/cache/index{}", cpu_dir, index);
    const std::string level = readFirstLine(dir + "/level");
    if (level.empty()) break;
    if (readFirstLine(dir + "/type") == "Instruction") continue;
    const int64_t bytes = parseSize(readFirstLine(dir + "/size"));
    if (bytes <= 0) continue;
    caches.push_back({"L" + level, bytes, 0.0});
  }
  std::sort(caches.begin(), caches.end(),
            [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  return caches;
}

}  // namespace

HostFacts readHostFacts(const std::string& sysfs_cpu_dir, const std::string& proc_dir) {
  HostFacts f;
  f.cpu_model = procField(proc_dir + "/cpuinfo", "model name");
  const auto number = [&](const char* key) {
    const std::string text = procField(proc_dir + "/cpuinfo", key);
    return text.empty() ? -1 : std::atoi(text.c_str());
  };
  f.cpu_family = number("cpu family");
  f.cpu_model_number = number("model");
  f.logical_cpus = static_cast<int64_t>(std::thread::hardware_concurrency());
  const std::string max_khz = readFirstLine(sysfs_cpu_dir + "/cpufreq/cpuinfo_max_freq");
  if (!max_khz.empty()) {
    f.clock_hz = std::atof(max_khz.c_str()) * 1e3;
  } else {
    f.clock_hz = std::atof(procField(proc_dir + "/cpuinfo", "cpu MHz").c_str()) * 1e6;
  }
  // "MemTotal:       24608572 kB"
  f.memory_bytes =
      static_cast<int64_t>(std::atof(procField(proc_dir + "/meminfo", "MemTotal").c_str())) * 1024;
  f.caches = readCaches(sysfs_cpu_dir);
  return f;
}

}  // namespace tracetwin::calibration
