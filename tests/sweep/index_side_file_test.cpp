// The side file `sweep --measure` / `--emit-traces` writes beside each rank's
// trace: every embedding_bag of the rank's tables, by node id, with its
// table's Zipf exponent, read back by the replay's own reader.
#include "sweep/index_side_file.h"

#include <gtest/gtest.h>

#include "predictors/specs/index_distribution_spec.h"
#include "sweep/sweep_spec.h"

namespace tracetwin::sweep {
namespace {

const char* kZipfFile = R"(world_size: 2
batch_size: 4
dense: {features: 3, bottom_mlp: [6], top_mlp: [1]}
tables:
  - {name: a, rows: 100, dim: 8, pooling: 3, zipf: 1.2}
  - {name: b, rows: 50, dim: 16, pooling: 2}
  - {name: "c\"q", rows: 70, dim: 8, pooling: 5, zipf: 1.05}
plans:
  - {name: p, assign: {a: 0, b: 1, 'c"q': 0}}
)";

TEST(IndexSideFile, NamesEachLookupOfTheRankWithItsTablesExponent) {
  const SweepSpec spec = parseSweepSpec(kZipfFile, "z.yaml");
  const std::vector<int> owner = {0, 1, 0};
  for (int rank : {0, 1}) {
    const RankStep step = buildRankStep(spec, owner, rank);
    const core::Graph g = rankGraph(step, "z rank");
    const auto parsed =
        predictors::parseIndexDistributions(indexDistributionYaml(spec, tableWise(owner), step), "side.yaml");
    const auto resolved = predictors::resolveIndexDistributions(parsed, g);
    EXPECT_TRUE(resolved.unmatched.empty());
    std::map<int, double> by_table;  // table index -> exponent resolved for its lookup
    for (const OpTag& tag : step.tags) {
      auto it = resolved.lookups.find(tag.id);
      if (it != resolved.lookups.end()) by_table[tag.table] = it->second.zipf;
    }
    if (rank == 0) {
      ASSERT_EQ(by_table.size(), 2u);
      EXPECT_DOUBLE_EQ(by_table.at(0), 1.2);
      EXPECT_DOUBLE_EQ(by_table.at(2), 1.05);
      // Lookup and backward read the same indices, SGD's add_ their sparse
      // gradient: each gets its table's histogram.
      const auto reuse = predictors::indexReuseOf(resolved);
      int adds = 0;
      for (const auto& [id, hist] : reuse) adds += g.node(id).name == "aten::add_" ? 1 : 0;
      EXPECT_GE(adds, 2);
      EXPECT_GE(reuse.size(), 6u);
    } else {
      ASSERT_EQ(by_table.size(), 1u);
      EXPECT_DOUBLE_EQ(by_table.at(1), 0.0) << "uniform";
    }
  }
  // A rank without tables gets an empty list, still a valid file.
  const RankStep none = buildRankStep(spec, {0, 0, 0}, 1);
  EXPECT_TRUE(predictors::parseIndexDistributions(indexDistributionYaml(spec, tableWise({0, 0, 0}), none), "s.yaml")
                  .tables.empty());
  EXPECT_EQ(indexSideFileName(1), "rank1.index.yaml");
  EXPECT_EQ(indexSideFileName(-1), "rank{rank}.index.yaml");
}

TEST(IndexSideFile, ALaterRowWiseShardOfAZipfTableDrawsFromItsFirstRow) {
  std::string text = kZipfFile;
  const std::string plan = "{name: p, assign: {a: 0, b: 1, 'c\"q': 0}}";
  text.replace(text.find(plan), plan.size(), "{name: p, assign: {a: row_wise, b: 1, 'c\"q': 0}}");
  const SweepSpec spec = parseSweepSpec(text, "z.yaml");
  const std::vector<Placement>& place = spec.plans[0].place;
  for (int rank : {0, 1}) {
    const RankStep step = buildRankStep(spec, place, rank);
    const std::string yaml = indexDistributionYaml(spec, place, step);
    const auto resolved = predictors::resolveIndexDistributions(
        predictors::parseIndexDistributions(yaml, "side.yaml"), rankGraph(step, "z rank"));
    core::IndexLaw a;  // table a's lookup on this rank
    for (const OpTag& tag : step.tags) {
      auto it = resolved.lookups.find(tag.id);
      if (tag.table == 0 && it != resolved.lookups.end()) a = it->second;
    }
    EXPECT_DOUBLE_EQ(a.zipf, 1.2) << yaml;
    // Rank 1 holds rows 50..99: the law's tail, not a Zipf law of its own.
    EXPECT_EQ(a.first_row, rank == 0 ? 0 : 50) << yaml;
  }
}

}  // namespace
}  // namespace tracetwin::sweep
