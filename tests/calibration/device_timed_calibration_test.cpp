// Calibration on a device that times kernels (CUDA with CUPTI): each op's
// sample is its kernels' time, its host call time and kernel count ride
// along in the dataset, and the fit turns them into the host costs a GPU
// prediction needs. Driven here by a fake kernel collector on the CPU host,
// which makes a CPU replay report device time as CUPTI would.
#include <gtest/gtest.h>
#include <unistd.h>  // getpid

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "calibration/calibrator.h"
#include "calibration/dataset.h"
#include "calibration/microbench.h"
#include "calibration/replay_unit.h"
#include "predictors/models/model_set.h"
#include "predictors/host/overheads.h"
#include "replay/device/fake_kernel_collector.h"
#include "replay/replayer.h"
#include "tests/calibration/toy_seams.h"

namespace tracetwin::calibration {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kFakeKernelNs = 3000;  // every op: one 3 us kernel

// Scripts one kernel for each of the first 4096 ops of every replay, on a
// `Collector` (a FakeKernelCollector or one derived from it).
template <class Collector = replay::device::FakeKernelCollector>
void withFakeKernels(replay::ReplayOptions& ro) {
  ro.make_collector = [] {
    auto c = std::make_unique<Collector>();
    for (uint64_t op = 0; op < 4096; ++op) c->script(op, {{"fake_kernel", 7, kFakeKernelNs}});
    return c;
  };
}

// A collector that, like CUPTI, costs the host time on every launch: it
// spins kLaunchCostUs inside each op's call.
constexpr double kLaunchCostUs = 300;

class CostlyCollector : public replay::device::FakeKernelCollector {
 public:
  void pushOp(uint64_t op) override {
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(kLaunchCostUs);
    while (std::chrono::steady_clock::now() < until) {
    }
    FakeKernelCollector::pushOp(op);
  }
};

MicrobenchCase reluCase() {
  const std::vector<MicrobenchCase> cases = microbenchFamily("elementwise").cases(GridOptions{});
  auto it = std::find_if(cases.begin(), cases.end(), [](const MicrobenchCase& c) {
    return c.label.rfind("relu numel=1000 ", 0) == 0;
  });
  if (it == cases.end()) throw std::runtime_error("no 'relu numel=1000' case in the grid");
  return *it;
}

TEST(DeviceTimedCalibration, RowsTakeKernelTimeAndKeepTheHostCallBesideIt) {
  if (!replay::replayAvailable()) GTEST_SKIP() << "built without LibTorch: nothing to replay";
  const MicrobenchCase relu = reluCase();
  CalibrationOptions o;
  o.adjust_replay = withFakeKernels<>;
  const CaseOutcome out = runCase(ReplayUnit{{relu}, relu.est_us}, o, "fake-gpu");
  ASSERT_TRUE(out.failure.empty()) << out.failure;
  ASSERT_FALSE(out.rows.empty());
  for (const DatasetRow& r : out.rows) {
    EXPECT_DOUBLE_EQ(r.sample.measured_us, kFakeKernelNs / 1e3) << r.case_label;
    EXPECT_GT(r.host_us, 0.0) << "the real call on this host";
    EXPECT_NE(r.host_us, r.sample.measured_us);
    EXPECT_EQ(r.kernels, 1);
  }
  // The between-op sample holds the host loop, not the (device) iteration.
  ASSERT_TRUE(out.between.has_value());
  EXPECT_GT(out.between->ops, 0);
  EXPECT_GT(out.between->iteration_us, out.between->op_us);
  EXPECT_GE(out.between->between_us, 0.0);

  // A CPU replay without a collector keeps the CPU's rows: no host figures.
  const CaseOutcome cpu = runCase(ReplayUnit{{relu}, relu.est_us}, CalibrationOptions{}, "cpu");
  ASSERT_FALSE(cpu.rows.empty());
  EXPECT_DOUBLE_EQ(cpu.rows[0].host_us, 0.0);
  EXPECT_EQ(cpu.rows[0].kernels, -1);
}

// The host side comes from a second replay without the collector, so the
// collector's own per-launch cost is not a host cost of the op.
TEST(DeviceTimedCalibration, HostTimesLeaveOutTheCollectorsPerLaunchCost) {
  if (!replay::replayAvailable()) GTEST_SKIP() << "built without LibTorch: nothing to replay";
  const MicrobenchCase relu = reluCase();
  CalibrationOptions o;
  o.adjust_replay = withFakeKernels<CostlyCollector>;
  const CaseOutcome plain = runCase(ReplayUnit{{relu}, relu.est_us}, o, "fake-gpu");
  o.host_pass_without_collector = false;
  const CaseOutcome beside = runCase(ReplayUnit{{relu}, relu.est_us}, o, "fake-gpu");
  ASSERT_TRUE(plain.failure.empty()) << plain.failure;
  ASSERT_FALSE(plain.rows.empty());
  ASSERT_FALSE(beside.rows.empty());
  for (const DatasetRow& r : plain.rows) {
    EXPECT_DOUBLE_EQ(r.sample.measured_us, kFakeKernelNs / 1e3) << "kernel times: timed replay";
    EXPECT_EQ(r.kernels, 1);
    EXPECT_LT(r.host_us, kLaunchCostUs / 2) << r.case_label;
  }
  for (const DatasetRow& r : beside.rows) EXPECT_GE(r.host_us, kLaunchCostUs) << r.case_label;
  ASSERT_TRUE(plain.between.has_value());
  EXPECT_LT(plain.between->op_us, kLaunchCostUs * plain.between->ops / 2);
}

TEST(DeviceTimedCalibration, FitsHostCostsThatTheSavedModelsCarryAndARefitKeeps) {
  if (!replay::replayAvailable()) GTEST_SKIP() << "built without LibTorch: nothing to replay";
  CalibrationOptions o;
  o.out_dir =
      (fs::temp_directory_path() / ("tracetwin_calib_device_timed_" + std::to_string(::getpid())))
          .string();
  fs::remove_all(o.out_dir);
  o.budget_s = 3;
  o.repeats = 2;
  o.families = {"elementwise", "view"};
  o.adjust_replay = withFakeKernels<>;
  // The device spec is not under test: the toy host's, not the seconds of
  // mm, copy, page-fault and cache probes a real one takes.
  o.seams.probe_device = [](const ProbeOptions&) { return testing::toyProbe({}); };
  const CalibrationResult r = runCalibration(o);
  ASSERT_TRUE(r.host_costs.ok());
  EXPECT_GT(r.host_costs.launching_ops, 0);
  for (const auto& [op, c] : r.host_costs.per_op) {
    EXPECT_GT(c.host_us, 0.0) << op;
    EXPECT_EQ(c.kernels, 1) << op << ": the fake launches one kernel per op";
  }
  // Every row of the dataset carries its host time.
  const std::vector<DatasetRow> rows = readDataset(o.out_dir + "/dataset.jsonl");
  ASSERT_FALSE(rows.empty());
  for (const DatasetRow& row : rows) {
    EXPECT_GT(row.host_us, 0.0) << row.case_label;
    EXPECT_EQ(row.kernels, 1) << row.case_label;
  }
  const auto t2 = [](const predictors::ModelSet& m) {
    return m.overheads.t[static_cast<int>(predictors::Overhead::kT2)];
  };
  const predictors::ModelSet saved = predictors::ModelSet::load(o.out_dir);
  const std::string op = r.host_costs.per_op.begin()->first;
  ASSERT_EQ(t2(saved).count(op), 1u);
  EXPECT_DOUBLE_EQ(t2(saved).at(op).median_us, r.host_costs.per_op.begin()->second.host_us);
  EXPECT_EQ(t2(saved).count(predictors::kAllOps), 1u);

  // A refit fits them again from the dataset's host times: the same table.
  const CalibrationResult refit = refitFromDataset(o.out_dir, libtorchVersion());
  EXPECT_EQ(refit.host_costs.per_op.size(), r.host_costs.per_op.size());
  EXPECT_EQ(predictors::ModelSet::load(o.out_dir).overheads.toJson(), saved.overheads.toJson());
  fs::remove_all(o.out_dir);
}

}  // namespace
}  // namespace tracetwin::calibration
