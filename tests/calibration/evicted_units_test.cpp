#include "calibration/evicted_units.h"

#include <gtest/gtest.h>

#include "calibration/graph_builder.h"
#include "tests/support/values.h"

namespace tracetwin::calibration {
namespace {

using testing::kMiB;

// A row for `label` whose op is an add_ of two [16] float tensors.
DatasetRow addRow(const std::string& label, double us) {
  GraphBuilder b;
  auto a = b.tensor({16});
  const core::NodeId id =
      b.op("aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
           {a, b.tensor({16}), GraphBuilder::intValue(1)}, {a});
  const core::Graph g = b.build("test");
  DatasetRow r;
  r.case_label = label;
  r.sample.node = g.node(id);
  r.sample.measured_us = us;
  return r;
}

TEST(EvictedUnits, EachColdRowPairsWithItsHotTwin) {
  const std::vector<DatasetRow> rows = {
      addRow("add_ numel=16 float32", 0.5),                   // the grid point itself
      addRow("add_ numel=16 float32 [evicted]", 1.3),
      addRow("add_ numel=16 float32 [evicted, hot]", 0.6),
      addRow("add_ numel=32 float32 [evicted]", 1.0),         // no hot twin
  };
  EXPECT_FALSE(isEvictedRow(rows[0]));
  EXPECT_TRUE(isEvictedRow(rows[1]));
  EXPECT_TRUE(isEvictedRow(rows[2]));
  const std::vector<predictors::ColdTensorPair> pairs = evictedPairs(rows);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0].family, "elementwise");
  EXPECT_EQ(pairs[0].cold_us, 1.3);
  EXPECT_EQ(pairs[0].hot_us, 0.6);
  EXPECT_EQ(pairs[0].tensors, 2);     // self and other; the Scalar is no tensor
  EXPECT_EQ(pairs[0].bytes, 2 * 64);
}

TEST(EvictedUnits, TheStreamIsFourLastLevelCachesAndAtLeast128MiB) {
  EXPECT_EQ(evictBytes(32 * kMiB), 128 * kMiB);
  EXPECT_EQ(evictBytes(0), 128 * kMiB);
  EXPECT_EQ(evictBytes(256 * kMiB), 1024 * kMiB);
  ReplayUnit group;
  group.cases.resize(kGroupCases);
  group.est_us = 1200;
  const ReplayUnit u = evictedUnit(group, 128 * kMiB);
  EXPECT_EQ(u.cases.size(), kColdCases);
  EXPECT_EQ(u.flush_bytes, 128 * kMiB);
  EXPECT_EQ(u.busy_spacer, 0);
  EXPECT_GT(u.est_us, kRounds * 128.0 * kMiB / 1e4);
}

}  // namespace
}  // namespace tracetwin::calibration
