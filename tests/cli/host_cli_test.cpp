// `tracetwin host`: this host's CPU, clock and caches, and whether a model
// set's CPU models were calibrated on a host like it (what `make demo` asks
// before it uses the bundled models).
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/paths.h"
#include "tests/support/run.h"
#include "tests/support/traces.h"

namespace tracetwin {
namespace {

struct HostRun {
  int code = -1;
  std::string output;
};

HostRun runHost(const std::string& args) {
  const testing::CommandRun run = testing::runTracetwin("host " + args);
  return {run.exit_code, run.output()};
}

nlohmann::json hereFacts() {
  const HostRun run = runHost("--json");
  EXPECT_EQ(run.code, 0) << run.output;
  return nlohmann::json::parse(run.output).at("host");
}

// A model set directory whose device.yaml describes a CPU with this clock,
// logical CPU count and caches (sizes in bytes by level).
void writeCpuModelSet(const std::string& dir, double clock_mhz, int64_t cpus,
                      const nlohmann::json& caches) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/manifest.json") << "{}";
  std::ofstream yaml(dir + "/device.yaml");
  yaml.precision(17);
  yaml << "name: host-cpu\nkind: cpu\npeak_tflops:\n  float32: 0.007\nmemory_gb: 16\n"
       << "memory_bandwidth_gbps: 30\ncompute_units: " << cpus << "\nclock_mhz: " << clock_mhz
       << "\ncaches:\n";
  for (const auto& [level, bytes] : caches.items()) {
    yaml << "  - level: " << level << "\n    size_mb: " << bytes.get<double>() / (1 << 20) << "\n";
  }
}

TEST(HostCli, DescribesThisHost) {
  const HostRun run = runHost("");
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_EQ(run.output.rfind("host: ", 0), 0u) << run.output;
  const nlohmann::json facts = hereFacts();
  EXPECT_GT(facts.at("logical_cpus").get<int64_t>(), 0) << facts.dump();
}

// Every CPU of the affinity mask gets a reading; none is faster than the
// fastest reading of all (the shared baseline).
TEST(HostCli, MeasuresEveryCoresSpeed) {
  const HostRun run = runHost("--measure-cores --json");
  ASSERT_EQ(run.code, 0) << run.output;
  const nlohmann::json doc = nlohmann::json::parse(run.output);
  const nlohmann::json& cores = doc.at("cores").at("cores");
  cpu_set_t mask;  // the command inherits this process's
  ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
  EXPECT_EQ(int(cores.size()), CPU_COUNT(&mask)) << doc;
  for (const nlohmann::json& c : cores) {
    EXPECT_GE(c.at("median_slowdown").get<double>(), 1.0 - 1e-9) << c;
    EXPECT_GE(c.at("slow_share").get<double>(), 0.0) << c;
    EXPECT_LE(c.at("slow_share").get<double>(), 1.0) << c;
  }
  EXPECT_GT(doc.at("cores").at("baseline_us").get<double>(), 0) << doc;

  const HostRun text = runHost("--measure-cores");
  ASSERT_EQ(text.code, 0) << text.output;
  EXPECT_NE(text.output.find("cores now (the speed gauge's fixed work"), std::string::npos)
      << text.output;
}

// --serve-core-gauge answers each request on stdin with one JSON line (the
// gate scripts/sweep-pytorch.py holds open), and ends with its input; an
// unknown request is an input error that names its line.
TEST(HostCli, ServesTheCoreGaugeLineByLine) {
  const testing::CommandRun run = testing::runCommand(
      "printf 'read\\nwait 100 0\\n' | " + testing::tracetwinBinary() + " host --serve-core-gauge");
  ASSERT_EQ(run.exit_code, 0) << run.output();
  std::istringstream lines(run.out);
  std::vector<nlohmann::json> replies;
  for (std::string line; std::getline(lines, line);) replies.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(replies.size(), 2u) << run.out;
  cpu_set_t mask;
  ASSERT_EQ(sched_getaffinity(0, sizeof mask, &mask), 0);
  for (const nlohmann::json& r : replies) {
    EXPECT_EQ(int(r.at("slowdowns").size()), CPU_COUNT(&mask)) << r;
    EXPECT_GE(r.at("slowest").get<double>(), 1.0 - 1e-9) << r;
  }
  EXPECT_DOUBLE_EQ(replies[1].at("waited_s").get<double>(), 0.0);  // within 100x at once

  const testing::CommandRun bad = testing::runCommand(
      "printf 'read\\nwait fast\\n' | " + testing::tracetwinBinary() + " host --serve-core-gauge");
  EXPECT_EQ(bad.exit_code, 2) << bad.output();
  EXPECT_NE(bad.err.find("line 2: expected 'wait TOLERANCE MAX_WAIT_S'"), std::string::npos)
      << bad.err;
  EXPECT_EQ(std::count(bad.out.begin(), bad.out.end(), '\n'), 1) << bad.out;  // line 1's reply
  EXPECT_EQ(runHost("--serve-core-gauge --json").code, 2);                    // one or the other
}

TEST(HostCli, ModelsOfAHostLikeThisOneFitAndOfAnotherDoNot) {
  const nlohmann::json here = hereFacts();
  const nlohmann::json caches = here.at("caches");
  if (caches.empty() || !(here.at("clock_mhz").get<double>() > 0))
    GTEST_SKIP() << "this host reports no caches or clock: nothing to compare";
  testing::TempDir dir;
  const std::string same = dir.path() + "/same", other = dir.path() + "/other";
  writeCpuModelSet(same, here.at("clock_mhz").get<double>(), here.at("logical_cpus"), caches);
  nlohmann::json other_caches = caches;
  const std::string level = caches.begin().key();
  other_caches[level] = caches.begin()->get<int64_t>() * 3 / 2;  // 32 KiB -> 48 KiB, say
  writeCpuModelSet(other, here.at("clock_mhz").get<double>(), here.at("logical_cpus"),
                   other_caches);

  const HostRun fits = runHost("--models " + same);
  ASSERT_EQ(fits.code, 0) << fits.output;
  EXPECT_NE(fits.output.find("\nfits: yes\n"), std::string::npos) << fits.output;

  const HostRun differs = runHost("--models " + other);
  ASSERT_EQ(differs.code, 0) << differs.output;
  EXPECT_NE(differs.output.find("\nfits: no\n"), std::string::npos) << differs.output;
  EXPECT_NE(differs.output.find("calibrated on another host (" + level), std::string::npos)
      << differs.output;

  const nlohmann::json j = nlohmann::json::parse(runHost("--json --models " + other).output);
  EXPECT_FALSE(j.at("fits").get<bool>());
  ASSERT_EQ(j.at("differences").size(), 1u) << j.dump();
}

TEST(HostCli, GpuModelsAreNotThisHostsAndADirectoryWithoutModelsIsAnInputError) {
  testing::TempDir dir;
  const std::string gpu = dir.path() + "/gpu";
  std::filesystem::create_directories(gpu);
  std::ofstream(gpu + "/manifest.json") << "{}";
  std::filesystem::copy_file(testing::sourcePath("configs/devices/h100.yaml"),
                             gpu + "/device.yaml");
  const HostRun run = runHost("--models " + gpu);
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("not a host CPU"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("\nfits: no\n"), std::string::npos) << run.output;

  const HostRun empty = runHost("--models " + dir.path());
  EXPECT_EQ(empty.code, 2) << empty.output;
  EXPECT_NE(empty.output.find(dir.path() + ": not a model set"), std::string::npos) << empty.output;
  // An empty path was read as no --models at all (exit 0, no comparison).
  EXPECT_EQ(runHost("--models ''").code, 2);
}

// --measure-reuse runs the reuse probe (calibration/reuse_probe.h): five
// rounds, their capacities and the median, as text and as JSON.
TEST(HostCli, MeasuresTheReuseCapacityOnRequest) {
  const HostRun json = runHost("--json --measure-reuse");
  ASSERT_EQ(json.code, 0) << json.output;
  const nlohmann::json reuse = nlohmann::json::parse(json.output).at("reuse");
  EXPECT_EQ(reuse.at("round_capacity_bytes").size(), 5u);
  EXPECT_GE(reuse.at("capacity_bytes").get<double>(), 0.0);
  EXPECT_GT(reuse.at("cold_us").get<double>(), 0.0);
  const HostRun text = runHost("--measure-reuse");
  ASSERT_EQ(text.code, 0) << text.output;
  EXPECT_NE(text.output.find("reuse capacity: "), std::string::npos) << text.output;
  EXPECT_EQ(runHost("").output.find("reuse"), std::string::npos) << "only on request";
}

}  // namespace
}  // namespace tracetwin
