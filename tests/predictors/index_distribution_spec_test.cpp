// The --index-distribution side file: strict YAML (errors with
// file:line:col), matching by node id and weight shape, the readers of a
// lookup's indices and their index-reuse histograms.
#include "predictors/specs/index_distribution_spec.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/aten_schemas.h"
#include "core/errors.h"
#include "core/trace_reader.h"
#include "predictors/kernels/feature_shapes.h"
#include "predictors/kernels/features.h"
#include "tests/support/graphs.h"
#include "tests/support/paths.h"

namespace tracetwin::predictors {
namespace {

using testing::boolValue;
using testing::intValue;
using testing::tensorValue;

std::string errorOf(const std::string& text) {
  try {
    parseIndexDistributions(text, "d.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(IndexDistributionSpec, ReadsNodeAndShapeRules) {
  const auto spec = parseIndexDistributions(
      "tables:\n"
      "  - {node: 42, zipf: 1.05, name: t0}\n"
      "  - {rows: 200000, dim: 32, zipf: 1.2}\n"
      "  - {rows: 5000}\n",
      "d.yaml");
  ASSERT_EQ(spec.tables.size(), 3u);
  EXPECT_EQ(spec.tables[0].node, 42);
  EXPECT_DOUBLE_EQ(spec.tables[0].zipf, 1.05);
  EXPECT_EQ(spec.tables[0].name, "t0");
  EXPECT_EQ(spec.tables[1].rows, 200000);
  EXPECT_EQ(spec.tables[1].dim, 32);
  EXPECT_EQ(spec.tables[2].dim, 0);
  EXPECT_DOUBLE_EQ(spec.tables[2].zipf, 0.0) << "no zipf: uniform";
  EXPECT_EQ(spec.tables[1].where, "d.yaml:3:5");
}

TEST(IndexDistributionSpec, BadFilesNameTheirPlace) {
  EXPECT_EQ(errorOf("tables:\n  - {node: 1, zipf: 1.1, skew: 2}\n").rfind("d.yaml:2:", 0), 0u);
  EXPECT_NE(errorOf("tables:\n  - {node: 1, zipf: 1.1, skew: 2}\n").find("unknown key 'skew'"),
            std::string::npos);
  EXPECT_NE(errorOf("tables: []\nextra: 1\n").find("d.yaml:2:1: unknown key 'extra'"),
            std::string::npos);
  EXPECT_NE(errorOf("tables:\n  - {zipf: 1.1}\n").find("exactly one of 'node'"),
            std::string::npos);
  EXPECT_NE(errorOf("tables:\n  - {node: 3, rows: 10}\n").find("exactly one of 'node'"),
            std::string::npos);
  EXPECT_NE(errorOf("tables:\n  - {node: 3, dim: 10}\n").find("d.yaml:2:20: 'dim' goes with"),
            std::string::npos);
  EXPECT_NE(errorOf("tables:\n  - {node: x}\n").find("'node' must be an op id"),
            std::string::npos);
  EXPECT_NE(errorOf("tables:\n  - {rows: 10, zipf: -1}\n").find("d.yaml:2:"), std::string::npos);
  EXPECT_NE(errorOf("tables:\n  - {rows: 0}\n").find("d.yaml:2:"), std::string::npos);
  EXPECT_NE(errorOf("tables:\n  - {node: 3}\n  - {node: 3, zipf: 1}\n")
                .find("d.yaml:3:5: tables[1] names the same lookup as the entry at d.yaml:2:5"),
            std::string::npos);
  EXPECT_NE(errorOf("tables:\n  - {node: 3, first_row: 10}\n").find("it needs 'zipf' > 0"),
            std::string::npos);
  EXPECT_NE(errorOf("tables:\n  - {node: 3, zipf: 1, first_row: -2}\n").find("d.yaml:2:"),
            std::string::npos);
  EXPECT_NE(errorOf("tables:\n  - {node: 3, zipf: 1, first_row: x}\n").find("a row number"),
            std::string::npos);
  // 2^63-1 was read, and the replay's Zipf weights overflowed past the shard's first row.
  EXPECT_NE(errorOf("tables:\n  - {node: 3, zipf: 1, first_row: 9223372036854775807}\n")
                .find("'first_row' must be from 0 to 2^62, got 9223372036854775807"),
            std::string::npos);
  EXPECT_NE(errorOf("tables: {a: 1}\n").find("'tables' must be a list"), std::string::npos);
  EXPECT_NE(errorOf("tables: [\n").find("YAML syntax error"), std::string::npos);
  EXPECT_THROW(loadIndexDistributions("/nonexistent/d.yaml"), InputError);
}

// Two tables, each looked up then backpropagated, and an unrelated relu:
// ids 3 (lookup of [1000, 16]), 4 (its backward), 5 (lookup of [50, 8]),
// 6 (its backward), 7 (relu).
core::Graph twoTables() {
  testing::GraphBuilder b;
  auto lookup = [&](int64_t w, int64_t idx, int64_t rows, int64_t dim, int64_t n) {
    b.op(core::schemas::kEmbeddingBag,
         {tensorValue(w, w, {rows, dim}), tensorValue(idx, idx, {n}, "long", 8),
          tensorValue(idx + 1, idx + 1, {n / 4}, "long", 8), boolValue(false), intValue(0),
          boolValue(true), testing::noneValue(), boolValue(false), intValue(-1)},
         {tensorValue(idx + 50, idx + 50, {n / 4, dim})});
    b.op(core::schemas::kEmbeddingBagBackward,
         {tensorValue(idx + 60, idx + 60, {n / 4, dim}), tensorValue(idx, idx, {n}, "long", 8),
          tensorValue(idx + 1, idx + 1, {n / 4}, "long", 8), tensorValue(idx + 2, idx + 2, {0}),
          tensorValue(idx + 3, idx + 3, {n / 4}), tensorValue(idx + 4, idx + 4, {n / 4}),
          intValue(rows), boolValue(false), intValue(0), boolValue(true), testing::noneValue(),
          intValue(-1)},
         {});
  };
  lookup(10, 20, 1000, 16, 400);
  lookup(11, 30, 50, 8, 40);
  b.op("aten::relu(Tensor self) -> Tensor", {tensorValue(90, 90, {4})},
       {tensorValue(91, 91, {4})});
  return b.build();
}

TEST(IndexDistributionSpec, ResolvesLookupsAndTheOpsReadingTheirIndices) {
  const core::Graph g = twoTables();
  const auto spec = parseIndexDistributions(
      "tables:\n  - {rows: 1000, dim: 16, zipf: 1.2}\n  - {node: 5, zipf: 1.05}\n"
      "  - {rows: 77}\n",
      "d.yaml");
  const auto r = resolveIndexDistributions(spec, g);
  ASSERT_EQ(r.lookups.size(), 2u);
  EXPECT_DOUBLE_EQ(r.lookups.at(3).zipf, 1.2);
  EXPECT_DOUBLE_EQ(r.lookups.at(5).zipf, 1.05);
  ASSERT_EQ(r.readers.size(), 4u) << "each lookup and its backward";
  EXPECT_EQ(r.readers.at(4).rows, 1000);
  EXPECT_EQ(r.readers.at(4).lookups, 400);
  EXPECT_DOUBLE_EQ(r.readers.at(6).exponent, 1.05);
  ASSERT_EQ(r.unmatched.size(), 1u);
  EXPECT_NE(r.unmatched[0].find("d.yaml:4:5: 77 rows"), std::string::npos);
  // The predictor's histograms: the Zipf ones, as the sweep computes them.
  const auto reuse = indexReuseOf(r);
  ASSERT_EQ(reuse.size(), 4u);
  EXPECT_EQ(reuse.at(3), zipfReuseHistogram(400, 1000, 1.2));
  EXPECT_EQ(reuse.at(6), zipfReuseHistogram(40, 50, 1.05));
  // A node rule wins over a shape rule; a shape without dim matches any width.
  const auto both = resolveIndexDistributions(
      parseIndexDistributions("tables:\n  - {rows: 50, zipf: 2}\n  - {node: 5, zipf: 1.1}\n",
                              "d.yaml"),
      g);
  EXPECT_DOUBLE_EQ(both.lookups.at(5).zipf, 1.1);
  // Uniform entries resolve but give the predictor nothing new.
  const auto uniform = resolveIndexDistributions(
      parseIndexDistributions("tables:\n  - {rows: 50}\n", "d.yaml"), g);
  EXPECT_DOUBLE_EQ(uniform.lookups.at(5).zipf, 0.0);
  EXPECT_TRUE(indexReuseOf(uniform).empty());
}

TEST(IndexDistributionSpec, ANodeRuleMustNameALookup) {
  const core::Graph g = twoTables();
  for (const char* text : {"tables:\n  - {node: 7, zipf: 1}\n", "tables:\n  - {node: 99}\n"}) {
    try {
      resolveIndexDistributions(parseIndexDistributions(text, "d.yaml"), g);
      FAIL() << "expected InputError for " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("d.yaml:2:5: node"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("not an embedding lookup"), std::string::npos);
    }
  }
}

TEST(IndexDistributionSpec, AnInnerLookupNamedWithAnotherLawIsAnError) {
  // embedding_bag 58 runs _embedding_bag 60 on the same indices: one law.
  const core::Graph g = core::readTrace(testing::dataPath("embbag_sparse.et.json.gz"));
  const auto resolve = [&](const std::string& text) {
    return resolveIndexDistributions(parseIndexDistributions(text, "d.yaml"), g);
  };
  try {
    resolve("tables:\n  - {node: 58, zipf: 1.1}\n  - {node: 60, zipf: 0.5}\n");
    FAIL() << "the inner lookup's entry was dropped silently";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("d.yaml:3:5: node 60 ('aten::_embedding_bag') reads the "
                                         "indices of node 58"),
              std::string::npos)
        << e.what();
  }
  // The same law twice, the inner one alone, or a shape entry it also matches: fine.
  EXPECT_DOUBLE_EQ(resolve("tables:\n  - {node: 58, zipf: 1.1}\n  - {node: 60, zipf: 1.1}\n")
                       .lookups.at(58)
                       .zipf,
                   1.1);
  EXPECT_DOUBLE_EQ(resolve("tables:\n  - {node: 60, zipf: 1.1}\n").lookups.at(60).zipf, 1.1);
  const auto shaped = resolve("tables:\n  - {node: 58, zipf: 1.1}\n  - {rows: 200000, zipf: 2}\n");
  EXPECT_DOUBLE_EQ(shaped.lookups.at(58).zipf, 1.1);
}

// The Zipf histogram's first bin (rows looked up once) against its exact
// share, sum of c e^-c over sum of 1 - e^-c (Poisson counts c_i = lookups
// p_i). Binned at each row's mean count, which exceeds 1 for every c > 0,
// the long tail of rows looked up once went to the second bin (share 0).
TEST(IndexDistributionSpec, AShardsFirstRowReachesTheLawAndTheHistogram) {
  const core::Graph g = twoTables();
  const auto spec = parseIndexDistributions(
      "tables:\n  - {node: 3, zipf: 1.2, first_row: 4000}\n", "d.yaml");
  const auto r = resolveIndexDistributions(spec, g);
  EXPECT_EQ(r.lookups.at(3), (core::IndexLaw{1.2, 4000}));
  const auto reuse = indexReuseOf(r);
  EXPECT_EQ(reuse.at(3), zipfReuseHistogram(400, 1000, 1.2, 4000));
  // Rows 4000..4999 of a Zipf table are nearly flat: 400 lookups into them
  // are mostly distinct, where the law over 1,000 rows of its own repeats
  // its hot rows.
  EXPECT_GT(uniqueFraction(reuse.at(3)), uniqueFraction(zipfReuseHistogram(400, 1000, 1.2)) + 0.2);
  EXPECT_NEAR(uniqueFraction(reuse.at(3)),
              uniqueFraction(poissonReuseHistogram(400, 1000)), 0.05);
}

TEST(IndexDistributionSpec, ZipfHistogramCountsRowsLookedUpOnceInTheFirstBin) {
  struct Case {
    double lookups;
    int64_t rows;
    double s;
  };
  for (const Case& c : {Case{10240, 100000, 1.05}, Case{15360, 200000, 1.2},
                        Case{1024, 5000, 1.1}, Case{153600, 200000, 1.05}}) {
    double norm = 0, once = 0, touched = 0;
    for (int64_t i = 1; i <= c.rows; ++i) norm += std::pow(double(i), -c.s);
    for (int64_t i = 1; i <= c.rows; ++i) {
      const double ci = c.lookups * std::pow(double(i), -c.s) / norm;
      once += ci * std::exp(-ci);
      touched += -std::expm1(-ci);
    }
    const auto hist = zipfReuseHistogram(c.lookups, c.rows, c.s);
    EXPECT_NEAR(hist[0], once / touched, 1e-3)
        << c.lookups << " lookups, " << c.rows << " rows, s " << c.s;
    ASSERT_EQ(hist.size(), size_t(kReuseValuesWithUnique));
    double total = 0;
    for (int b = 0; b < kReuseBins; ++b) total += hist[size_t(b)];
    EXPECT_NEAR(total, 1.0, 1e-9);
    // The unique fraction it carries is the expected distinct rows over the
    // lookups, not the bins' mid-point estimate (which reads the hottest
    // rows, thousands of lookups each, as 96).
    EXPECT_NEAR(uniqueFraction(hist), touched / c.lookups, 1e-9);
    // Far fewer distinct rows than uniform draws into the same table.
    EXPECT_LT(uniqueFraction(hist), 0.8 * uniqueFraction(poissonReuseHistogram(c.lookups, c.rows)));
  }
}

// Past 65,536 rows the histogram sums the rows in blocks 0.1% wide: against
// the sum row by row (as it was computed before), every value agrees to
// 1e-9, for exponents on both sides of 1 and at 1, and for a row-wise
// shard's tail. A table of a billion rows takes ~10^4 blocks instead of 10^9
// calls of pow.
TEST(IndexDistributionSpec, ZipfHistogramOfAHugeTableSumsItsRowsInBlocks) {
  auto row_by_row = [](double lookups, int64_t rows, double s, int64_t first) {
    std::vector<double> hist(kReuseBins, 0.0);
    double norm = 0, touched_total = 0;
    for (int64_t i = 1; i <= rows; ++i) norm += std::pow(double(first + i), -s);
    for (int64_t i = 1; i <= rows; ++i) {
      const double c = lookups * std::pow(double(first + i), -s) / norm;
      const double touched = -std::expm1(-c);
      touched_total += touched;
      if (c > 32) {  // a hot row: its mean count's bin
        hist[size_t(std::min(int(std::ceil(std::log2(c / touched))), kReuseBins - 1))] += touched;
        continue;
      }
      double pk = c * std::exp(-c) / touched, cumulative = 0;
      for (int k = 1; k <= 64; ++k) {
        const int bin = k == 1 ? 0 : std::min(int(std::ceil(std::log2(double(k)))), kReuseBins - 1);
        hist[size_t(bin)] += touched * pk;
        cumulative += pk;
        if (cumulative > 1 - 1e-9) break;
        pk *= c / double(k + 1);
      }
      hist[kReuseBins - 1] += touched * std::max(0.0, 1.0 - cumulative);
    }
    for (double& h : hist) h /= touched_total;
    hist.push_back(touched_total / lookups);
    return hist;
  };
  for (const double s : {0.8, 1.0, 1.05, 1.2}) {
    for (const int64_t first : {int64_t{0}, int64_t{1'000'000}}) {
      const std::vector<double> blocks = zipfReuseHistogram(20000, 400'000, s, first);
      const std::vector<double> exact = row_by_row(20000, 400'000, s, first);
      ASSERT_EQ(blocks.size(), exact.size());
      for (size_t b = 0; b < exact.size(); ++b)
        EXPECT_NEAR(blocks[b], exact[b], 1e-9)
            << "s " << s << ", first row " << first << ", bin " << b;
    }
  }
  const std::vector<double> billion = zipfReuseHistogram(1e6, 1'000'000'000, 1.05);
  double total = 0;
  for (int b = 0; b < kReuseBins; ++b) total += billion[size_t(b)];
  EXPECT_NEAR(total, 1.0, 1e-9);
  EXPECT_GT(uniqueFraction(billion), 0.0);
  EXPECT_LT(uniqueFraction(billion), uniqueFraction(poissonReuseHistogram(1e6, 1e9)));
}

TEST(ZipfReuse, SteeperShardsDeepInATableReuseMoreNotLess) {
  // (10^6 + i)^-s underflows to 0 for every row once s > ~51: the shares
  // were 0/0 and a steeper law looked all-unique, slower than uniform.
  double previous = uniqueFraction(poissonReuseHistogram(20000, 400'000));
  for (const double s : {50.0, 300.0, 400.0, 2000.0}) {
    const double unique = uniqueFraction(zipfReuseHistogram(20000, 400'000, s, 1'000'000));
    EXPECT_LT(unique, previous) << "s " << s;
    EXPECT_GT(unique, 0.0) << "s " << s;
    previous = unique;
  }
}

}  // namespace
}  // namespace tracetwin::predictors

namespace tracetwin::predictors {
namespace {

// The embedding model reads a Zipf histogram's carried unique fraction, not
// the bins' mid-point estimate, and keeps its columns (8 of them bins).
TEST(IndexDistributionSpec, EmbeddingFeaturesTakeTheHistogramsUniqueFraction) {
  const core::Graph g = twoTables();
  const core::Node& lookup = g.node(3);  // 400 lookups into a 1000 x 16 table
  const auto zipf = zipfReuseHistogram(400, 1000, 1.2);
  const OpFeatures with = computeFeatures(lookup, &zipf);
  EXPECT_DOUBLE_EQ(with.unique_fraction, zipf[kReuseBins]);
  std::vector<double> bins(zipf.begin(), zipf.begin() + kReuseBins);
  const OpFeatures without = computeFeatures(lookup, &bins);
  EXPECT_EQ(with.x.size(), without.x.size());
  EXPECT_EQ(with.x.size(), size_t(7 + kReuseBins + 2));
  EXPECT_NE(with.unique_fraction, without.unique_fraction);
  // zipf-check's tables: 15,360 lookups into 200,000 rows at 1.2. The bins
  // read the hottest rows (thousands of lookups each) as 96.
  const auto big = zipfReuseHistogram(15360, 200000, 1.2);
  const std::vector<double> big_bins(big.begin(), big.begin() + kReuseBins);
  EXPECT_NEAR(uniqueFraction(big), 0.200, 0.005);
  EXPECT_NEAR(uniqueFraction(big_bins), 0.344, 0.005);
}

// The embedding model's last column says sparse=True (forward and backward):
// a sparse step writes no rows x dim gradient between two lookups, so a Zipf
// table's hot rows stay cached (docs/calibration.md). A booster saved with
// the 16 columns before it reads its repeated column there instead.
TEST(IndexDistributionSpec, EmbeddingFeaturesSaySparseGradients) {
  const core::Graph g = twoTables();  // both lookups sparse=True
  const OpFeatures forward = computeFeatures(g.node(3), nullptr);
  const OpFeatures backward = computeFeatures(g.node(4), nullptr);
  ASSERT_EQ(forward.x.size(), featureCount("embedding_bag"));
  EXPECT_EQ(forward.x.back(), 1.0f);
  EXPECT_EQ(backward.x.back(), 1.0f);
  EXPECT_TRUE(embeddingShape(g.node(3)).sparse);
  core::Node dense = g.node(3);
  dense.inputs[5] = boolValue(false);
  EXPECT_FALSE(embeddingShape(dense).sparse);
  const OpFeatures dense_f = computeFeatures(dense, nullptr);
  EXPECT_EQ(dense_f.x.back(), 0.0f);
  // Everything else alike.
  EXPECT_EQ(std::vector<float>(dense_f.x.begin(), dense_f.x.end() - 1),
            std::vector<float>(forward.x.begin(), forward.x.end() - 1));
  EXPECT_DOUBLE_EQ(dense_f.bytes, forward.bytes);
}

}  // namespace
}  // namespace tracetwin::predictors
