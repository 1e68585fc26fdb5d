// Ranking plans with the bundled host models (deterministic model files, no
// measurement): order, JSON, memory feasibility.
#include "sweep/sweep_run.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "predictors/kernels/feature_shapes.h"
#include "predictors/kernels/features.h"
#include "predictors/models/model_set.h"
#include "sweep/composed_model.h"
#include "sweep/strategies.h"
#include "sweep/sweep_output.h"
#include "sweep/sweep_spec.h"
#include "tests/support/paths.h"

namespace tracetwin::sweep {
namespace {

const char* kRunFile = R"(world_size: 2
batch_size: 16
tables:
  - {name: big, rows: 50000, dim: 16, pooling: 20}
  - {name: mid, rows: 20000, dim: 16, pooling: 10}
  - {name: small, rows: 1000, dim: 16, pooling: 2}
plans:
  - {name: lopsided, assign: {big: 0, mid: 0, small: 0}}
  - {name: balanced, strategy: greedy}
  - {name: rr, strategy: round_robin}
)";

predictors::ModelSet hostModels() {
  return predictors::ModelSet::load(testing::sourcePath("data/models/host"));
}

TEST(SweepRun, RanksPlansByPredictedStep) {
  const SweepSpec s = parseSweepSpec(kRunFile, "s.yaml");
  const predictors::ModelSet models = hostModels();
  SweepOptions o;
  const auto costs = calibrateComposed(s, models, o.predict).tableCosts();
  ASSERT_EQ(costs.size(), 3u);
  EXPECT_GT(costs[0], costs[2]);  // 200 lookups a bag... against 2
  const auto plans = expandPlans(s, [&] { return costs; });
  size_t progress = 0;
  o.progress = [&](size_t done, size_t total) {
    EXPECT_EQ(total, 3u);
    progress = done;
  };
  const auto ranked = runSweep(s, plans, models, o);
  EXPECT_EQ(progress, 3u);
  ASSERT_EQ(ranked.size(), 3u);
  for (size_t k = 1; k < ranked.size(); ++k) {
    EXPECT_LE(ranked[k - 1].predicted_ms, ranked[k].predicted_ms);
  }
  // Everything on rank 0 leaves rank 1 waiting at the first all_to_all.
  EXPECT_EQ(ranked.back().plan.name, "lopsided");
  const RankResult& idle = ranked.back().ranks[1];
  EXPECT_LT(idle.embedding_ms, 0.01);  // only the zeros([bags, 0]) it sends
  EXPECT_GT(idle.wait_ms, 0.0);
  EXPECT_GT(ranked.back().imbalance, ranked.front().imbalance);
  const auto j = sweepJson(s, ranked, "host");
  EXPECT_EQ(j["best_predicted"], ranked.front().plan.name);
  EXPECT_EQ(j["plans"].size(), 3u);
  EXPECT_EQ(j["plans"][2]["assignment"]["mid"], 0);
  EXPECT_EQ(j["plans"][0]["ranks"].size(), 2u);
  // The text is a plan per line, with the measurement beside the plans.
  const std::string text = sweepJsonText(s, ranked, "host", {{"measurement", {{"rounds", 3}}}});
  const auto parsed = nlohmann::json::parse(text);
  EXPECT_EQ(parsed["measurement"]["rounds"], 3);
  EXPECT_EQ(parsed["plans"], j["plans"]);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 15) << text;  // {, 9 keys, 3 plans, ], }
  EXPECT_EQ(nlohmann::json::parse(sweepJsonText(s, {}, "host"))["plans"].size(), 0u);
}

TEST(SweepRun, PlansOverTheMemoryLimitAreInfeasibleAndNotRanked) {
  const SweepSpec s = parseSweepSpec(kRunFile, "s.yaml");
  const predictors::ModelSet models = hostModels();
  SweepOptions o;
  // big alone is 3.2 MB of weights: a limit of 4 MB a rank rules out the
  // plan holding all three tables on one rank, not the balanced ones.
  EXPECT_GT(rankMemoryBytes(s, {0, 0, 0}, 0), 4'000'000);
  EXPECT_LT(rankMemoryBytes(s, {0, 1, 1}, 0), 4'000'000);
  o.memory_limit_bytes = 4'000'000;
  const auto ranked = runSweep(
      s, {{"all0", "explicit", {0, 0, 0}, {}}, {"split", "explicit", {0, 1, 1}, {}}}, models, o);
  EXPECT_TRUE(ranked[0].feasible);
  EXPECT_EQ(ranked[0].plan.name, "split");
  EXPECT_FALSE(ranked[1].feasible);
  EXPECT_NE(ranked[1].infeasible.find("rank 0 needs"), std::string::npos);
  const auto j = sweepJson(s, ranked, "host");
  EXPECT_TRUE(j["plans"][1]["predicted_ms"].is_null());
  EXPECT_EQ(j["best_predicted"], "split");
}

// Row-wise halves a table's weights a rank, data-parallel holds it whole on
// both with a dense gradient and its bucket copy; split plans are predicted
// jointly and written with their placement codes.
TEST(SweepRun, SplitPlansMemoryPredictionAndJson) {
  const SweepSpec s = parseSweepSpec(kRunFile, "s.yaml");
  const std::vector<Placement> rw = {{Sharding::kRowWise, {0, 1}},
                                     {Sharding::kTableWise, {1}},
                                     {Sharding::kTableWise, {1}}};
  const int64_t dense = rankMemoryBytes(s, std::vector<Placement>{{Sharding::kTableWise, {1}},
                                                                  {Sharding::kTableWise, {1}},
                                                                  {Sharding::kTableWise, {1}}},
                                        0);  // rank 0 holds no table
  const int64_t big = 50000 * 16 * 4;
  const int64_t big_grad = (16 * 2 * 20 / 2) * (16 * 4 + 8);  // its half of the lookups, sparse
  EXPECT_EQ(rankMemoryBytes(s, rw, 0), dense + big / 2 + big_grad);
  const std::vector<Placement> dp = {{Sharding::kDataParallel, {0, 1}},
                                     {Sharding::kTableWise, {1}},
                                     {Sharding::kTableWise, {1}}};
  EXPECT_EQ(rankMemoryBytes(s, dp, 0), dense + 3 * big);
  const predictors::ModelSet models = hostModels();
  SweepOptions o;
  Plan plan{"rw", "explicit", {-1, 1, 1}, rw};
  const auto ranked = runSweep(s, {plan, {"tw", "explicit", {0, 1, 1}, {}}}, models, o);
  ASSERT_EQ(ranked.size(), 2u);
  for (const PlanResult& p : ranked) {
    EXPECT_TRUE(p.feasible);
    EXPECT_GT(p.predicted_ms, 0);
    EXPECT_EQ(p.predicted_by, "joint");
  }
  const auto j = sweepJson(s, ranked, "host");
  const auto& entry = j["plans"][ranked[0].plan.name == "rw" ? 0 : 1];
  EXPECT_EQ(entry["assignment"]["big"], "rw:0+1");
  EXPECT_EQ(entry["owner"][1], 1);
  EXPECT_EQ(entry["ranks"][0]["tables"][0], "big[rows 0..25000)");
}

// The composed model against the joint prediction it screens for: same
// order, within 5% (model arithmetic on the bundled model files, no timing).
TEST(SweepRun, ComposedModelFollowsTheJointPrediction) {
  const SweepSpec s = parseSweepSpec(kRunFile, "s.yaml");
  const predictors::ModelSet models = hostModels();
  SweepOptions o;
  const ComposedModel composed = calibrateComposed(s, models, o.predict);
  std::vector<double> c, j;
  for (const std::vector<int>& owner :
       std::vector<std::vector<int>>{{0, 0, 0}, {0, 1, 1}, {0, 1, 0}, {1, 0, 0}}) {
    const Plan plan{"p", "explicit", owner, {}};
    c.push_back(composed.estimate(plan).predicted_ms);
    j.push_back(predictPlan(s, plan, models, o).predicted_ms);
    EXPECT_NEAR(c.back() / j.back(), 1.0, 0.05) << owner[0] << owner[1] << owner[2];
  }
  for (size_t a = 0; a < c.size(); ++a) {
    for (size_t b = a + 1; b < c.size(); ++b) {
      if (std::abs(j[a] - j[b]) > 0.03 * j[a]) {
        EXPECT_EQ(c[a] < c[b], j[a] < j[b]) << a << b;
      }
    }
  }
  // A screened sweep: every plan estimated, the best `verify` predicted jointly.
  o.full_max = 1;
  o.verify = 1;
  const auto ranked = runSweep(s,
                               {{"a", "explicit", {0, 0, 0}, {}},
                                {"b", "explicit", {0, 1, 1}, {}},
                                {"c", "explicit", {1, 0, 0}, {}}},
                               models, o);
  EXPECT_EQ(ranked[0].predicted_by, "joint");
  EXPECT_EQ(ranked[1].predicted_by, "composed");
  EXPECT_EQ(ranked[2].predicted_by, "composed");
}

// Six CPU ranks on the bundled host's 2 cores take every phase in turns
// (processor sharing, with memory contention), and a rank that holds more of
// the tables holds more of the last-level cache: the composed model follows
// the joint prediction on plans that spread the tables and on plans that
// gather them (docs/sweeps.md, "Speed"; the file's own plans are some of these).
TEST(SweepRun, ComposedModelSharesTheHostsCoresAsTheJointPredictionDoes) {
  const SweepSpec s = loadSweepSpec(testing::sourcePath("configs/sweeps/coloc/gather6.yaml"));
  const predictors::ModelSet models = hostModels();
  ASSERT_EQ(models.device.compute_units, 2);
  SweepOptions o;
  const ComposedModel composed = calibrateComposed(s, models, o.predict);
  EXPECT_EQ(composed.cores, 2);
  std::vector<double> c, j;
  for (const std::vector<int>& owner : std::vector<std::vector<int>>{{0, 1, 2, 3, 4, 5, 0},
                                                                     {3, 1, 1, 0, 2, 4, 5},
                                                                     {5, 4, 3, 2, 1, 0, 5},
                                                                     {1, 2, 0, 5, 4, 3, 2},
                                                                     {0, 1, 2, 3, 4, 5, 5},
                                                                     {0, 0, 0, 0, 0, 0, 0},
                                                                     {0, 0, 1, 1, 2, 2, 3},
                                                                     {0, 0, 0, 0, 0, 1, 1}}) {
    const Plan plan{"p", "explicit", owner, {}};
    c.push_back(composed.estimate(plan).predicted_ms);
    j.push_back(predictPlan(s, plan, models, o).predicted_ms);
    EXPECT_NEAR(c.back() / j.back(), 1.0, 0.03)
        << "plan " << c.size() << ": composed " << c.back() << " ms, joint " << j.back() << " ms";
  }
  for (size_t a = 0; a < c.size(); ++a) {
    for (size_t b = a + 1; b < c.size(); ++b) {
      if (std::abs(j[a] - j[b]) > 0.03 * j[a]) {
        EXPECT_EQ(c[a] < c[b], j[a] < j[b]) << a << b;
      }
    }
  }
  // Without the sharing (a host per rank) the screen was off by about 2x.
  ComposedModel apart = composed;
  apart.cores = 0;
  const Plan first{"p", "explicit", {0, 1, 2, 3, 4, 5, 0}, {}};
  EXPECT_LT(apart.estimate(first).predicted_ms, 0.6 * j[0]);
}

}  // namespace
}  // namespace tracetwin::sweep

namespace tracetwin::sweep {
namespace {

// Data-distribution awareness: the same table with Zipf indices has far
// fewer unique rows, and its lookups are predicted cheaper.
TEST(SweepRun, ZipfTablesHaveFewerUniqueRowsAndPredictCheaper) {
  const auto uniform = predictors::poissonReuseHistogram(1024, 5000);
  const auto skewed = predictors::zipfReuseHistogram(1024, 5000, 1.1);
  double total = 0;
  for (int b = 0; b < predictors::kReuseBins; ++b) total += skewed[size_t(b)];
  EXPECT_NEAR(total, 1.0, 1e-9);
  EXPECT_LT(predictors::uniqueFraction(skewed), 0.5 * predictors::uniqueFraction(uniform));
  const std::string base = R"(world_size: 2
batch_size: 64
tables:
  - {name: a, rows: 400000, dim: 32, pooling: 20ZIPF}
  - {name: b, rows: 1000, dim: 32, pooling: 2}
plans:
  - {name: p, assign: {a: 0, b: 1}}
)";
  const predictors::ModelSet models = hostModels();
  const SweepOptions o;
  auto embeddingMs = [&](const std::string& zipf) {
    std::string text = base;
    text.replace(text.find("ZIPF"), 4, zipf);
    const SweepSpec s = parseSweepSpec(text, "s.yaml");
    return predictPlan(s, {"p", "explicit", {0, 1}, {}}, models, o).ranks[0].embedding_ms;
  };
  EXPECT_LT(embeddingMs(", zipf: 1.2"), embeddingMs(""));
}

}  // namespace
}  // namespace tracetwin::sweep
