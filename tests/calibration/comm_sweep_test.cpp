// The comm sweep's traces and the samples read back from the distributed
// replay's report (calibration/comm_sweep.h); no replay runs here.
#include "calibration/comm_sweep.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/comm/collective_spec.h"
#include "core/errors.h"
#include "core/trace_reader.h"

namespace tracetwin::calibration {
namespace {

// The cases of a sweep of one 4 KiB point of `collective` on 2 ranks.
std::vector<CommSweepCase> onePointCases(const std::string& collective) {
  CommGrid grid;
  grid.collectives = {collective};
  grid.sizes_bytes = {4096};
  grid.copies = 1;
  std::vector<CommSweepCase> cases;
  commSweepTrace(grid, 2, "cpu", &cases);
  return cases;
}

// The sweep's trace for `group_size` ranks, as the replay reads it.
core::Graph readSweep(const CommGrid& grid, std::vector<CommSweepCase>* cases,
                      int group_size = 2) {
  const auto path = std::filesystem::temp_directory_path() / "tracetwin_comm_sweep_test.et.json";
  std::ofstream(path) << commSweepTrace(grid, group_size, "cpu", cases);
  core::Graph g = core::readTrace(path.string());
  std::filesystem::remove(path);
  return g;
}

TEST(CommSweep, TheTraceHoldsEveryPointAsACollectiveTheReplayReads) {
  CommGrid grid;
  grid.sizes_bytes = {1024, 1 << 20};
  grid.copies = 2;
  std::vector<CommSweepCase> cases;
  const core::Graph g = readSweep(grid, &cases, 3);
  ASSERT_EQ(cases.size(), 5u * 2 * 2);
  const core::Selection sel = core::selectTopLevelOps(g);
  // Each collective after its compute spacer, and the two lead-in all-reduces.
  ASSERT_EQ(sel.ops.size(), 2 * cases.size() + 2);
  std::set<int64_t> storages;
  for (const CommSweepCase& c : cases) {
    const core::Node& n = g.node(c.node);
    ASSERT_EQ(n.category, core::NodeCategory::kCommunication);
    const core::comm::CollectiveSpec spec = core::comm::readCollective(n);
    EXPECT_EQ(spec.group_size, 3);
    const std::string kind = core::comm::collectiveInfo(spec.kind).name;
    EXPECT_NE(kind.find(c.collective), std::string::npos) << kind << " for " << c.collective;
    // Whole floats per rank: 1024 bytes on 3 ranks is 255 floats.
    EXPECT_EQ(c.bytes % (4 * 3), 0);
    int64_t biggest = 0;
    for (const auto* vals : {&n.inputs, &n.outputs}) {
      for (const core::Value& v : *vals) {
        core::forEachTensor(v, [&](const core::TensorValue& t) {
          biggest = std::max(biggest, t.numel * t.itemsize);
          if (vals == &n.inputs) storages.insert(t.storage_id);
        });
      }
    }
    EXPECT_EQ(biggest, c.bytes) << c.collective;  // nccl-tests' size is the largest buffer
  }
  EXPECT_EQ(storages.size(), 1u);  // one after the other on one storage
}

// The node the replay runs just before node `id` on the sweep's one thread.
const core::Node& opBefore(const core::Graph& g, core::NodeId id) {
  const std::vector<core::NodeId> ops = core::selectTopLevelOps(g).ops;
  const auto at = std::find(ops.begin(), ops.end(), id);
  if (at == ops.begin() || at == ops.end()) throw std::runtime_error("no op before");
  return g.node(*(at - 1));
}

TEST(CommSweep, EachCollectiveFollowsAnMmOnItsStorageUnlessTheSpacerIsOff) {
  CommGrid grid;
  grid.collectives = {"all_reduce", "all_to_all"};
  grid.sizes_bytes = {4096};
  grid.copies = 2;
  grid.spacer_mm = 64;
  std::vector<CommSweepCase> cases;
  const core::Graph g = readSweep(grid, &cases);
  ASSERT_EQ(cases.size(), 4u);
  for (const CommSweepCase& c : cases) {
    const core::Node& mm = opBefore(g, c.node);
    ASSERT_EQ(mm.name, "aten::mm") << "before node " << c.node;
    ASSERT_EQ(mm.inputs.size(), 2u);
    const core::TensorValue& a = *mm.inputs[0].tensor;
    EXPECT_EQ(a.shape, (std::vector<int64_t>{64, 64}));
    // It reads the collectives' storage: the replay waits for the collective
    // before it, so every measured collective starts after compute.
    EXPECT_EQ(a.storage_id, g.node(c.node).inputs[0].elements[0].tensor->storage_id);
  }
  grid.spacer_mm = 0;
  cases.clear();
  const core::Graph tight = readSweep(grid, &cases);
  for (const CommSweepCase& c : cases) {
    EXPECT_EQ(opBefore(tight, c.node).name, "record_param_comms") << "before node " << c.node;
  }
}

TEST(CommSweep, SamplesComeFromEveryRanksTransfers) {
  const std::vector<CommSweepCase> cases = onePointCases("broadcast");
  ASSERT_EQ(cases.size(), 1u);
  nlohmann::json report = {{"ranks", nlohmann::json::array()}};
  for (double us : {120.0, 130.0}) {
    report["ranks"].push_back(
        {{"collectives", {{{"id", cases[0].node}, {"transfer_us", us}, {"wait_us", 1.0}}}}});
  }
  const auto samples = commSamplesFromReport(report, cases, 2);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].collective, "broadcast");
  EXPECT_DOUBLE_EQ(samples[1].seconds, 130e-6);
  EXPECT_EQ(samples[0].group_size, 2);
  report["ranks"] = nlohmann::json::array();
  EXPECT_THROW(commSamplesFromReport(report, cases, 2), InputError);
}

TEST(CommSweep, SamplesAreTheMeanTransferWhereTheReportHasIt) {
  // A host that stalls a third of the calls by a 4 ms tick: median 0.3 ms,
  // mean 1.6 ms. The model is of the expected time, so the mean is the sample.
  const std::vector<CommSweepCase> cases = onePointCases("all_reduce");
  ASSERT_EQ(cases.size(), 1u);
  nlohmann::json call = {{"id", cases[0].node},
                         {"transfer_us", 300.0},
                         {"wait_us", 0.0},
                         {"transfer_mean_us", 1600.0},
                         {"wait_mean_us", 0.0}};
  nlohmann::json report = {{"ranks", {{{"collectives", {call}}}}}};
  ASSERT_EQ(commSamplesFromReport(report, cases, 2).size(), 1u);
  EXPECT_DOUBLE_EQ(commSamplesFromReport(report, cases, 2)[0].seconds, 1600e-6);
}

TEST(CommSweep, TheJitterComesFromTheWaitsBehindTheSpacer) {
  const std::vector<CommSweepCase> cases = onePointCases("all_reduce");
  ASSERT_EQ(cases.size(), 1u);
  // Two ranks waited 500 and 700 us behind a spacer of 6 ms (two per iteration, 12 ms).
  nlohmann::json report = {{"ranks", nlohmann::json::array()}};
  for (double wait : {500.0, 700.0}) {
    report["ranks"].push_back(
        {{"collectives", {{{"id", cases[0].node}, {"wait_mean_us", wait}, {"wait_us", 0.0}}}},
         {"families", {{"gemm", {{"count", 2}, {"cpu_us", 12000.0}, {"device_us", 0.0}}}}}});
  }
  const CommJitterSample j = commJitterFromReport(report, cases, 2);
  EXPECT_DOUBLE_EQ(j.mean_wait_us, 600);
  EXPECT_DOUBLE_EQ(j.spacer_us, 6000);
  // sigma = 600 / E[max of 2] = 600 sqrt(pi); v = sigma^2 / 6000.
  EXPECT_NEAR(j.variance_per_us, 600 * 600 * M_PI / 6000, 1e-6);
  // On a GPU the spacer's time is its kernel's.
  for (auto& r : report["ranks"]) r["families"]["gemm"]["device_us"] = 60.0;
  EXPECT_DOUBLE_EQ(commJitterFromReport(report, cases, 2).spacer_us, 30);
  for (auto& r : report["ranks"]) r.erase("families");
  EXPECT_THROW(commJitterFromReport(report, cases, 2), InputError);  // no spacer time
}

TEST(CommSweep, BadGridsAreRefused) {
  CommGrid grid;
  grid.collectives = {"all_scatter"};
  EXPECT_THROW(checkCommGrid(grid), UsageError);
  grid = CommGrid{};
  grid.group_sizes = {1};
  EXPECT_THROW(checkCommGrid(grid), UsageError);
  grid = CommGrid{};
  grid.sizes_bytes = {4};
  EXPECT_THROW(checkCommGrid(grid), UsageError);  // less than a float per rank
  grid = CommGrid{};
  grid.spacer_mm = -1;
  EXPECT_THROW(checkCommGrid(grid), UsageError);
}

}  // namespace
}  // namespace tracetwin::calibration
