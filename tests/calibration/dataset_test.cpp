#include "calibration/dataset.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "calibration/microbench.h"
#include "calibration/repeat_pooling.h"
#include "core/errors.h"

namespace tracetwin::calibration {
namespace {

std::string tempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("tracetwin_calib_" + name)).string();
}

TEST(Dataset, RoundTripsNodesTimesAndReuse) {
  std::vector<DatasetRow> rows;
  for (const auto* fam : {"gemm", "embedding_bag", "copy"}) {
    const MicrobenchCase c = microbenchFamily(fam).cases(GridOptions{}).front();
    const core::Graph g = c.build();
    for (core::NodeId id : core::selectTopLevelOps(g).ops) {
      DatasetRow r;
      r.case_label = c.label;
      r.sample.node = g.node(id);
      r.sample.measured_us = 12.5 + static_cast<double>(rows.size());
      r.sample.device = "host-cpu";
      r.sample.index_reuse = c.index_reuse;
      if (rows.size() % 2 == 1) r.repeats_us = {r.sample.measured_us, 2 * r.sample.measured_us};
      rows.push_back(r);
    }
  }
  const std::string path = tempPath("roundtrip.jsonl");
  writeDataset(path, rows);
  const std::vector<DatasetRow> back = readDataset(path);
  ASSERT_EQ(back.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const core::Node& a = rows[i].sample.node;
    const core::Node& b = back[i].sample.node;
    SCOPED_TRACE(a.name);
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.op_schema_text, a.op_schema_text);
    ASSERT_EQ(b.inputs.size(), a.inputs.size());
    for (size_t k = 0; k < a.inputs.size(); ++k) {
      EXPECT_EQ(b.inputs[k].type, a.inputs[k].type);
      EXPECT_EQ(b.inputs[k].kind, a.inputs[k].kind);
      EXPECT_EQ(b.inputs[k].tensor->shape, a.inputs[k].tensor->shape);
      EXPECT_EQ(b.inputs[k].tensor->dtype, a.inputs[k].tensor->dtype);
      EXPECT_EQ(b.inputs[k].int_value, a.inputs[k].int_value);
    }
    EXPECT_DOUBLE_EQ(back[i].sample.measured_us, rows[i].sample.measured_us);
    EXPECT_EQ(back[i].sample.index_reuse, rows[i].sample.index_reuse);
    EXPECT_EQ(back[i].case_label, rows[i].case_label);
    EXPECT_EQ(back[i].repeats_us, rows[i].repeats_us);
  }
  std::remove(path.c_str());
}

// One row of the copy grid's first point, measured at 3 us.
DatasetRow copyRow() {
  const MicrobenchCase c = microbenchFamily("copy").cases(GridOptions{}).front();
  const core::Graph g = c.build();
  DatasetRow r;
  r.case_label = c.label;
  r.sample.node = g.node(core::selectTopLevelOps(g).ops.front());
  r.sample.measured_us = 3.0;
  return r;
}

// Writes `row` to `path`, then for each of `bads` the first line with `good`
// replaced by it: reading it back must be an InputError naming the file,
// line 1 and then `named`.
void expectEachEditRejected(const std::string& path, const DatasetRow& row, const std::string& good,
                            const std::vector<std::string>& bads, const std::string& named) {
  writeDataset(path, {row});
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  in.close();
  const size_t at = line.find(good);
  ASSERT_NE(at, std::string::npos) << line;
  for (const std::string& bad : bads) {
    std::string edited = line;
    edited.replace(at, good.size(), bad);
    std::ofstream(path) << edited << "\n";
    try {
      readDataset(path);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(path + ":1: " + named), std::string::npos) << e.what();
    }
  }
}

TEST(Dataset, KeepsRepeatsAndRejectsBadOnes) {
  DatasetRow r = copyRow();
  r.repeats_us = {4.5, 2.0, 3.0};
  const std::string path = tempPath("repeats.jsonl");
  writeDataset(path, {r});
  ASSERT_EQ(readDataset(path).size(), 1u);
  EXPECT_EQ(readDataset(path)[0].repeats_us, r.repeats_us);
  // An op that launched no kernel measures 0 on a device that times kernels
  // (dropout with p = 0 on a GPU): its row is written and reads back; the fit
  // drops it, as it does when it measures it.
  r.repeats_us = {0.0, 0.0, 0.0};
  writeDataset(path, {r});
  EXPECT_EQ(readDataset(path)[0].repeats_us, r.repeats_us);
  r.repeats_us = {4.5, 2.0, 3.0};
  expectEachEditRejected(path, r, "\"repeats_us\":[4.5,2.0,3.0]",
                         {"\"repeats_us\":[4.5,-2.0]", "\"repeats_us\":\"fast\""},
                         "\"repeats_us\"");
  std::remove(path.c_str());
}

// GPU rows carry the op's host call and kernel count; CPU rows neither.
TEST(Dataset, KeepsHostTimesAndRejectsBadOnes) {
  DatasetRow gpu = copyRow();
  gpu.host_us = 7.25;
  gpu.kernels = 2;
  DatasetRow cpu = copyRow();
  const std::string path = tempPath("host_us.jsonl");
  writeDataset(path, {gpu, cpu});
  const std::vector<DatasetRow> back = readDataset(path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_DOUBLE_EQ(back[0].host_us, 7.25);
  EXPECT_EQ(back[0].kernels, 2);
  EXPECT_DOUBLE_EQ(back[1].host_us, 0.0);
  EXPECT_EQ(back[1].kernels, -1);
  expectEachEditRejected(path, gpu, "\"host_us\":7.25",
                         {"\"host_us\":-1.0", "\"host_us\":\"slow\"", "\"host_us\":0"},
                         "\"host_us\"");
  expectEachEditRejected(path, gpu, "\"kernels\":2", {"\"kernels\":-3", "\"kernels\":1.5"},
                         "\"kernels\"");
  // A host time needs its kernel count.
  expectEachEditRejected(path, gpu, ",\"kernels\":2", {""}, "\"host_us\" must be");
  std::remove(path.c_str());
}

// Rows pooled from another host (scripts/gpu-session.sh, pool_prior) keep
// the GPU's kernel counts without that host's host times.
TEST(Dataset, KeepsAKernelCountWithoutAHostTime) {
  DatasetRow pooled = copyRow();
  pooled.kernels = 4;
  const std::string path = tempPath("kernels.jsonl");
  writeDataset(path, {pooled});
  const std::vector<DatasetRow> back = readDataset(path);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_DOUBLE_EQ(back[0].host_us, 0.0);
  EXPECT_EQ(back[0].kernels, 4);
  std::remove(path.c_str());
}

// Rows carry the inputs' reuse distance in their unit, and spaced rows say so.
TEST(Dataset, KeepsReuseDistancesAndSpacedRowsAndRejectsBadOnes) {
  DatasetRow spaced = copyRow();
  spaced.sample.reuse_bytes = 25165824;
  spaced.sample.spaced = true;
  const DatasetRow old = copyRow();  // written before either
  const std::string path = tempPath("reuse_bytes.jsonl");
  writeDataset(path, {spaced, old});
  const std::vector<DatasetRow> back = readDataset(path);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_DOUBLE_EQ(back[0].sample.reuse_bytes, 25165824);
  EXPECT_TRUE(back[0].sample.spaced);
  EXPECT_LT(back[1].sample.reuse_bytes, 0);
  EXPECT_FALSE(back[1].sample.spaced);
  expectEachEditRejected(path, spaced, "\"reuse_bytes\":25165824.0",
                         {"\"reuse_bytes\":-1", "\"reuse_bytes\":\"far\""}, "\"reuse_bytes\"");
  expectEachEditRejected(path, spaced, "\"spaced\":true", {"\"spaced\":1"}, "\"spaced\"");
  std::remove(path.c_str());
}

TEST(RepeatPooling, MedianOrFastest) {
  const std::vector<double> us = {4.0, 9.0, 2.5, 5.0};
  EXPECT_DOUBLE_EQ(pooledUs(us, RepeatPooling::kMedian), 4.5);
  EXPECT_DOUBLE_EQ(pooledUs(us, RepeatPooling::kFastest), 2.5);
  EXPECT_DOUBLE_EQ(pooledUs({7.0}, RepeatPooling::kFastest), 7.0);
  EXPECT_EQ(poolingName(RepeatPooling::kFastest), "fastest");
  EXPECT_EQ(poolingName(RepeatPooling::kMedian), "median");
}

TEST(Dataset, RowsPairByGridPointAndOp) {
  auto row = [](const std::string& label, const std::string& op, double us) {
    DatasetRow r;
    r.case_label = label;
    r.sample.node.name = op;
    r.sample.measured_us = us;
    return r;
  };
  const std::vector<DatasetRow> rows = {
      row("a", "aten::t", 1.0),          row("a", "aten::t", 1.5),  // the last reference counts
      row("a", "aten::mm", 9.0),         row("a [x]", "aten::t", 3.0),
      row("a [x]", "aten::view", 4.0),   // no reference for this op
      row("b [x]", "aten::t", 5.0),      // no reference for this point
  };
  const PointOf measured = [](const DatasetRow& r) -> std::optional<std::string> {
    const size_t at = r.case_label.find(" [x]");
    if (at == std::string::npos) return std::nullopt;
    return r.case_label.substr(0, at);
  };
  const PointOf reference = [](const DatasetRow& r) -> std::optional<std::string> {
    if (r.case_label.find(" [x]") != std::string::npos) return std::nullopt;
    return r.case_label;
  };
  const auto pairs = pairByPoint(rows, measured, reference);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].first->sample.measured_us, 3.0);
  EXPECT_EQ(pairs[0].second->sample.measured_us, 1.5);
}

TEST(Dataset, BadLineNamesFileAndLine) {
  const std::string path = tempPath("bad.jsonl");
  {
    std::ofstream out(path);
    out << "{\"measured_us\": 1, \"node\": {}}\n";
    out << "not json\n";
  }
  try {
    readDataset(path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":2"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
  EXPECT_THROW(readDataset(tempPath("missing.jsonl")), InputError);
}

}  // namespace
}  // namespace tracetwin::calibration
