// The calibrate and compare commands end to end through the binary.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/statistics.h"
#include "predictors/models/model_set.h"
#include "tests/support/paths.h"
#include "tests/support/run.h"

namespace tracetwin {
namespace {

namespace fs = std::filesystem;

using RunResult = testing::CommandRun;

RunResult run(const std::string& args) { return testing::runTracetwin(args); }

// Models for the tests: the bundled host models when present, else a 10 s
// calibration of the families the MLP trace uses most.
std::string modelsDir() {
  static std::string dir = [] {
    const std::string bundled = testing::dataPath("models/host");
    if (fs::exists(bundled + "/manifest.json")) return bundled;
    const std::string tmp = (fs::temp_directory_path() / "tracetwin_calib_cli_models").string();
    fs::remove_all(tmp);
    run("calibrate --out " + tmp + " --budget-s 10 --families gemm,elementwise,view");
    return tmp;
  }();
  return dir;
}

TEST(CompareCommand, MlpGivesFiniteNumbersForEveryFamily) {
  if (!testing::replayHelperBuilt()) GTEST_SKIP() << "built without LibTorch";
  const std::string json = (fs::temp_directory_path() / "tracetwin_calib_compare.json").string();
  const RunResult r = run("compare " + testing::dataPath("mlp.et.json.gz") + " --models " +
                          modelsDir() + " --warmup 1 --iters 3 --json-out " + json);
  ASSERT_EQ(r.exit_code, 0) << r.output();
  EXPECT_NE(r.output().find("iteration"), std::string::npos) << r.output();
  std::ifstream in(json);
  const nlohmann::json doc = nlohmann::json::parse(in);
  for (const char* key : {"measured_ms", "predicted_ms", "error_pct"}) {
    ASSERT_TRUE(doc.contains(key)) << key;
    EXPECT_TRUE(std::isfinite(doc[key].get<double>())) << key;
  }
  EXPECT_GT(doc["measured_ms"].get<double>(), 0);
  EXPECT_GT(doc["predicted_ms"].get<double>(), 0);
  const double signed_error =
      100.0 * (doc["predicted_ms"].get<double>() - doc["measured_ms"].get<double>()) /
      doc["measured_ms"].get<double>();
  EXPECT_NEAR(doc["error_pct"].get<double>(), signed_error, 1e-9);
  // The iterations' p10-p90 spread, as a share of their median, in both.
  const std::vector<double> its = doc["measured_iterations_ms"].get<std::vector<double>>();
  ASSERT_EQ(its.size(), 3u);
  const double spread = 100 * (core::quantile(its, 0.9) - core::quantile(its, 0.1)) /
                        doc["measured_ms"].get<double>();
  EXPECT_NEAR(doc["measured_spread_pct"].get<double>(), spread, 1e-9);
  EXPECT_NE(r.output().find(fmt::format("({:.1f}% of the median)", spread)), std::string::npos)
      << r.output();
  EXPECT_EQ(r.output().find("the replayed iterations spread over") != std::string::npos, spread > 10)
      << r.output();
  // The MLP step's ops fall in these families (88 ops: mm/linear, add_/mul_/
  // relu, t/view, sum, cross-entropy); every one must have both numbers.
  int64_t ops = 0;
  for (const char* fam : {"gemm", "elementwise", "view", "reduction", "softmax"}) {
    ASSERT_TRUE(doc["families"].contains(fam)) << fam;
    const auto& f = doc["families"][fam];
    EXPECT_TRUE(std::isfinite(f["measured_ms"].get<double>())) << fam;
    EXPECT_TRUE(std::isfinite(f["predicted_ms"].get<double>())) << fam;
    EXPECT_GT(f["predicted_ms"].get<double>(), 0) << fam;
  }
  for (const auto& [name, f] : doc["families"].items()) ops += f["count"].get<int64_t>();
  EXPECT_EQ(ops, 88);
  // Per op, the code-cold share of the prediction where the models carry the
  // term (the bundled ones do), as `predict --json-out` reports it.
  int64_t cold_ops = 0;
  for (const auto& op : doc["per_op"]) {
    // Each share is part of the prediction, reported only where it is > 0.
    for (const char* share : {"code_cold_us", "cold_output_us", "cold_input_us"}) {
      if (!op.contains(share)) continue;
      EXPECT_GT(op[share].get<double>(), 0) << op.dump();
      EXPECT_LE(op[share].get<double>(), op["predicted_us"].get<double>()) << op.dump();
    }
    if (op.contains("code_cold_us")) ++cold_ops;
  }
  if (!predictors::ModelSet::load(modelsDir()).code_cold.empty()) {
    EXPECT_GT(cold_ops, 0);
  }
  // Ops outside the models' fitted op names, by name (the bundled models were
  // not fitted on the step's two aten::zeros).
  ASSERT_TRUE(doc["uncalibrated_ops"].is_array());
  for (const auto& u : doc["uncalibrated_ops"]) {
    EXPECT_GT(u["count"].get<int64_t>(), 0) << u.dump();
    EXPECT_FALSE(predictors::ModelSet::load(modelsDir())
                     .calibrated(u["family"].get<std::string>(), u["name"].get<std::string>()))
        << u.dump();
  }
  // CPU models name what differs between their host and this one (an empty
  // list here when they were calibrated on it), and the text says so too.
  ASSERT_TRUE(doc.contains("models_host_differences"));
  ASSERT_TRUE(doc["models_host_differences"].is_array());
  EXPECT_EQ(doc["models_host_differences"].empty(),
            r.output().find("calibrated on another host") == std::string::npos)
      << r.output();
  // The host's speed around the replay against the models' calibration
  // (host_speed.h): both probes measured, the calibrated rate the models'.
  ASSERT_TRUE(doc.contains("host_speed")) << r.output();
  const auto& speed = doc["host_speed"];
  EXPECT_GT(speed["before_gflops"].get<double>(), 0);
  EXPECT_GT(speed["after_gflops"].get<double>(), 0);
  const predictors::DeviceSpec spec = predictors::ModelSet::load(modelsDir()).device;
  EXPECT_DOUBLE_EQ(speed["calibrated_gflops"].get<double>(), spec.peak_flops.at("float32") / 1e9);
  EXPECT_NEAR(speed["ratio"].get<double>(),
              0.5 * (speed["before_gflops"].get<double>() + speed["after_gflops"].get<double>()) /
                  speed["calibrated_gflops"].get<double>(),
              1e-12);
  EXPECT_NE(r.output().find("host speed: the calibration's float32 mm probe ran at"),
            std::string::npos)
      << r.output();
  fs::remove(json);
}

TEST(CompareCommand, NoHostSpeedSkipsTheProbe) {
  if (!testing::replayHelperBuilt()) GTEST_SKIP() << "built without LibTorch";
  const std::string json = (fs::temp_directory_path() / "tracetwin_calib_nospeed.json").string();
  const RunResult r = run("compare " + testing::dataPath("adds5k.et.json.gz") + " --models " +
                          modelsDir() + " --warmup 0 --iters 1 --no-host-speed --json-out " + json);
  ASSERT_EQ(r.exit_code, 0) << r.output();
  std::ifstream in(json);
  const nlohmann::json doc = nlohmann::json::parse(in);
  EXPECT_FALSE(doc.contains("host_speed"));
  EXPECT_EQ(r.output().find("host speed:"), std::string::npos) << r.output();
  fs::remove(json);
}

TEST(CompareCommand, CoreToleranceGatesTheReplayOnTheCpuOnly) {
  if (!testing::replayHelperBuilt()) GTEST_SKIP() << "built without LibTorch";
  const std::string json = (fs::temp_directory_path() / "tracetwin_calib_gated.json").string();
  const RunResult r =
      run("compare " + testing::dataPath("adds5k.et.json.gz") + " --models " + modelsDir() +
          " --warmup 0 --iters 1 --no-host-speed " + "--core-tolerance 1.25 --json-out " + json);
  ASSERT_EQ(r.exit_code, 0) << r.output();
  EXPECT_NE(r.output().find("core gate: every core within 1.25x of the fast phase; "),
            std::string::npos)
      << r.output();
  std::ifstream in(json);
  const nlohmann::json gate = nlohmann::json::parse(in).at("core_gate");
  EXPECT_EQ(gate.at("tolerance").get<double>(), 1.25);
  const int runs = gate.at("runs").get<int>();
  EXPECT_TRUE(runs >= 1 && runs <= 3) << runs;  // one, and at most two more after slow ones
  EXPECT_EQ(gate.at("steady").get<bool>(), gate.at("kept_slowdown").get<double>() <= 1.25);
  fs::remove(json);

  // A GPU's step is the device's: the host's cores gate nothing there.
  const RunResult cuda = run("compare " + testing::dataPath("adds5k.et.json.gz") + " --models " +
                             modelsDir() + " --device cuda --core-tolerance 1.25");
  EXPECT_NE(cuda.exit_code, 0);
  EXPECT_NE(cuda.output().find("--core-tolerance gates a CPU replay on this host's cores"),
            std::string::npos)
      << cuda.output();
  // Below 1.05 no phase would ever pass.
  EXPECT_NE(run("compare x.json --models y --core-tolerance 1.0").exit_code, 0);
}

TEST(CompareCommand, MissingModelsDirectoryIsAnInputError) {
  const RunResult r = run("compare " + testing::dataPath("mlp.et.json.gz") +
                          " --models /nonexistent/tracetwin-models");
  EXPECT_EQ(r.exit_code, 2) << r.output();
  EXPECT_NE(r.output().find("/nonexistent/tracetwin-models: models directory not found"),
            std::string::npos)
      << r.output();
}

TEST(CalibrateCommand, UnknownFamilyListsTheKnownOnes) {
  const RunResult r = run("calibrate --out /tmp/tracetwin_calib_never --families gemm,gemmm");
  EXPECT_EQ(r.exit_code, 2) << r.output();
  EXPECT_NE(r.output().find("unknown microbenchmark family 'gemmm'"), std::string::npos) << r.output();
  EXPECT_NE(r.output().find("embedding_bag"), std::string::npos) << r.output();
}

TEST(CalibrateCommand, UnknownPoolingIsAUsageError) {
  const RunResult r = run("calibrate --out /tmp/tracetwin_calib_never --pool mean");
  EXPECT_EQ(r.exit_code, 2) << r.output();
  EXPECT_NE(r.output().find("--pool"), std::string::npos) << r.output();
  EXPECT_NE(r.output().find("fastest"), std::string::npos) << r.output();
}

TEST(CalibrateCommand, CudaWithoutAGpuSaysSo) {
  if (!testing::replayHelperBuilt()) GTEST_SKIP() << "built without LibTorch";
  const std::string dir = (fs::temp_directory_path() / "tracetwin_calib_cuda").string();
  fs::remove_all(dir);
  const RunResult r = run("calibrate --out " + dir + " --device cuda --budget-s 5");
  const bool left_behind = fs::exists(dir);
  fs::remove_all(dir);
  if (r.exit_code == 0) GTEST_SKIP() << "a CUDA device is present here";
  EXPECT_EQ(r.exit_code, 3) << r.output();
  EXPECT_NE(r.output().find("CUDA"), std::string::npos) << r.output();
  // The --out it made is not left behind empty (a bad-input hunt).
  EXPECT_FALSE(left_behind);
  // One that was there stays.
  fs::create_directories(dir);
  EXPECT_EQ(run("calibrate --out " + dir + " --device cuda --budget-s 5").exit_code, 3);
  EXPECT_TRUE(fs::is_directory(dir));
  fs::remove_all(dir);
}

// Ctrl-C during the microbenchmarks used to end the process silently, with
// the new --out left empty: it stops at the next point, says so, exits 130
// and removes the directory it made. SIGINT is sent once the progress line
// shows the handler is in place (no timing assumption).
TEST(CalibrateCommand, CtrlCStopsAtTheNextPointAndSaysSo) {
  if (!testing::replayHelperBuilt()) GTEST_SKIP() << "built without LibTorch";
  const std::string dir = (fs::temp_directory_path() / "tracetwin_calib_sigint").string();
  fs::remove_all(dir);
  const std::string err = dir + ".err";
  const RunResult r = testing::runCommand(fmt::format(
      "( {} calibrate --out {} --families view --budget-s 120 --repeats 1 >/dev/null 2>{} & "
      "p=$!; for i in $(seq 1200); do grep -q points {} && break; sleep 0.1; done; "
      "kill -INT $p; wait $p; echo rc=$?; cat {} )",
      testing::tracetwinBinary(), dir, err, err, err));
  fs::remove(err);
  EXPECT_NE(r.out.find("rc=130"), std::string::npos) << r.output();
  EXPECT_NE(r.out.find("tracetwin: interrupted: calibrate: stopped by Ctrl-C at point"),
            std::string::npos)
      << r.output();
  EXPECT_NE(r.out.find("nothing was written"), std::string::npos) << r.output();
  EXPECT_FALSE(fs::exists(dir));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tracetwin
