// `tracetwin predict` end to end: a saved ModelSet, a shared trace, the JSON
// report. Runs the built binary; skipped (with the reason) when it is absent.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "predictors/kernels/analytic_models.h"
#include "predictors/models/model_set.h"
#include "tests/support/paths.h"

namespace tracetwin::predictors {
namespace {

namespace fs = std::filesystem;
using tracetwin::testing::sharedTrace;
using tracetwin::testing::sourcePath;
using tracetwin::testing::tracetwinBinary;

TEST(PredictCli, WritesJsonWithEveryOpAndReportsUnmodelledOnes) {
  if (!fs::exists(tracetwinBinary()))
    GTEST_SKIP() << "tracetwin binary not built: " << tracetwinBinary();
  fs::path dir = fs::temp_directory_path() / "tracetwin_predict_cli_test";
  fs::remove_all(dir);
  ModelSet set;
  set.device = loadDeviceSpec(sourcePath("configs/devices/h100.yaml"));
  set.setModel("conv", std::make_shared<RooflineModel>());  // everything else falls back
  set.save((dir / "models").string());
  fs::path json = dir / "pred.json";
  std::string cmd = tracetwinBinary() + " predict " + sharedTrace("resnet_1.1.0_et.json.gz") +
                    " --models " + (dir / "models").string() + " --device-spec " +
                    sourcePath("configs/devices/a100.yaml") + " --json-out " + json.string() +
                    " > " + (dir / "out.txt").string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  nlohmann::json j;
  std::ifstream(json) >> j;
  EXPECT_EQ(j["device"], "A100-SXM4-80GB");
  EXPECT_EQ(j["per_op"].size(), 1237u);
  EXPECT_GT(j["iteration_ms"].get<double>(), 0.0);
  // Only conv is calibrated: the other 1,131 ops are fallbacks, each listed.
  EXPECT_EQ(j["unmodelled_ops"].size(), 1237u - 106u);
  for (const auto& op : j["per_op"]) {
    ASSERT_TRUE(op.contains("id") && op.contains("name") && op.contains("family") &&
                op.contains("model"));
    EXPECT_GE(op["predicted_us"].get<double>(), 0.0);
  }
  std::ifstream out(dir / "out.txt");
  std::string text((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("iteration:"), std::string::npos) << text;
  EXPECT_NE(text.find("unmodelled ops (1131;"), std::string::npos) << text;
  fs::remove_all(dir);
}

// data/h100/mlp_big: the ET and the Kineto trace come from two steps, so
// they link by name; every op then takes its recorded kernel time.
TEST(PredictCli, KernelTimesFromTheOriginalsKinetoTraceReplaceTheModels) {
  if (!fs::exists(tracetwinBinary()))
    GTEST_SKIP() << "tracetwin binary not built: " << tracetwinBinary();
  fs::path dir = fs::temp_directory_path() / "tracetwin_predict_kernel_times_test";
  fs::remove_all(dir);
  ModelSet set;
  set.device = loadDeviceSpec(sourcePath("configs/devices/h100.yaml"));
  set.save((dir / "models").string());
  const fs::path json = dir / "pred.json";
  const std::string cmd = tracetwinBinary() + " predict " +
                          sourcePath("data/h100/mlp_big.et.json.gz") + " --models " +
                          (dir / "models").string() + " --kernel-times " +
                          sourcePath("data/h100/mlp_big.kineto.json.gz") + " --json-out " +
                          json.string() + " > " + (dir / "out.txt").string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  nlohmann::json j;
  std::ifstream(json) >> j;
  ASSERT_EQ(j["per_op"].size(), 55u);
  double device_us = 0;
  for (const auto& op : j["per_op"]) {
    EXPECT_EQ(op["model"], "recorded") << op.dump();
    device_us += op["predicted_us"].get<double>();
  }
  EXPECT_GT(device_us, 10e3) << "mlp_big's GEMMs: most of a 19 ms step on the H100";
  EXPECT_TRUE(j["unmodelled_ops"].empty());
  std::ifstream out(dir / "out.txt");
  const std::string text((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("kernel times: 55 of 55 top-level ops linked"), std::string::npos) << text;
  fs::remove_all(dir);
}

TEST(PredictCli, KernelTimesRefuseACpuDestinationAndATraceWithoutKernels) {
  if (!fs::exists(tracetwinBinary()))
    GTEST_SKIP() << "tracetwin binary not built: " << tracetwinBinary();
  auto exitCode = [](const std::string& args) {
    const int status =
        std::system((tracetwinBinary() + " predict " + args + " >/dev/null 2>&1").c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  // The host models predict a CPU: recorded kernel times mean nothing there.
  EXPECT_EQ(exitCode(sourcePath("data/h100/mlp_big.et.json.gz") + " --models " +
                     sourcePath("data/models/host") + " --kernel-times " +
                     sourcePath("data/h100/mlp_big.kineto.json.gz")),
            2);
  // A CPU run's profile links, but has no kernel to take a time from.
  EXPECT_EQ(
      exitCode(sourcePath("data/mlp.et.json.gz") + " --models " + sourcePath("data/models/host") +
               " --device-spec " + sourcePath("configs/devices/h100.yaml") + " --kernel-times " +
               sourcePath("data/mlp.profiler.json.gz")),
      2);
}

TEST(PredictCli, AMissingKernelTimesFileIsAUsageError) {
  if (!fs::exists(tracetwinBinary()))
    GTEST_SKIP() << "tracetwin binary not built: " << tracetwinBinary();
  const std::string cmd = tracetwinBinary() + " predict " + sourcePath("data/mlp.et.json.gz") +
                          " --models " + sourcePath("data/models/host") +
                          " --kernel-times /nonexistent.json >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << status;
}

}  // namespace
}  // namespace tracetwin::predictors
