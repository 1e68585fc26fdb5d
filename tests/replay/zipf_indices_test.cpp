// Zipf-distributed embedding indices (replay/zipf_indices.h) and the side
// file's hook into the value generators: checked statistically with a fixed
// seed, never on timings.
#include "replay/zipf_indices.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <set>

#include "core/aten_schemas.h"
#include "core/errors.h"
#include "replay/value_generators.h"
#include "tests/support/graphs.h"

namespace tracetwin::replay {
namespace {

std::vector<int64_t> drawZipf(int64_t rows, double s, int64_t n, uint64_t seed, int64_t low = 0) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> u(static_cast<size_t>(n));
  for (double& x : u) x = uniform(gen);
  std::vector<int64_t> out(static_cast<size_t>(n));
  zipfRowsFromUniforms(*ZipfCdf::of(rows, s), low, u.data(), n, out.data());
  return out;
}

TEST(ZipfIndices, ProbabilitiesFollowThePowerLaw) {
  const ZipfCdf cdf(1000, 1.2);
  double sum = 0;
  for (int64_t i = 0; i < 1000; ++i) sum += std::pow(double(i + 1), -1.2);
  for (int64_t i : {0, 1, 9, 99, 999}) {
    EXPECT_NEAR(cdf.probability(i), std::pow(double(i + 1), -1.2) / sum, 1e-12) << i;
  }
  EXPECT_EQ(cdf.row(0.0), 0);
  EXPECT_EQ(cdf.row(std::nextafter(1.0, 0.0)), 999);
  EXPECT_EQ(ZipfCdf::of(1000, 1.2).get(), ZipfCdf::of(1000, 1.2).get()) << "built once";
}

TEST(ZipfIndices, AShardPastTheFirstRowDrawsFromTheLawsTail) {
  // Rows 500..999 of a 1,000-row Zipf 1.2 table: the full table's
  // probabilities of those rows, renormalised over them.
  const ZipfCdf table(1000, 1.2);
  const ZipfCdf shard(500, 1.2, 500);
  double tail = 0;  // the table's probability of rows 500..999
  for (int64_t i = 500; i < 1000; ++i) tail += table.probability(i);
  for (int64_t i : {0, 1, 99, 499}) {
    EXPECT_NEAR(shard.probability(i), table.probability(500 + i) / tail, 1e-12) << i;
  }
  // Much flatter than a Zipf law over 500 rows of its own.
  EXPECT_LT(shard.probability(0) / shard.probability(499),
            ZipfCdf(500, 1.2).probability(0) / ZipfCdf(500, 1.2).probability(499) / 100);
  EXPECT_NE(ZipfCdf::of(500, 1.2, 500).get(), ZipfCdf::of(500, 1.2).get());
  EXPECT_THROW(ZipfCdf(10, 1.0, -1), UsageError);
  EXPECT_THROW(ZipfCdf(10, 1.0, std::numeric_limits<int64_t>::max() - 5), UsageError);
}

TEST(ZipfIndices, ASteepShardDeepInATableStillPrefersItsFirstRow) {
  // (10^6 + i)^-400 is 0 in doubles for every row: the CDF was 0/0.
  const ZipfCdf shard(100, 400, 1000000);
  const double ratio = std::exp(-400 * std::log1p(1.0 / 1000001));  // row 1 over row 0
  EXPECT_NEAR(shard.probability(1) / shard.probability(0), ratio, 1e-9);
  EXPECT_EQ(shard.row(0.0), 0);
  EXPECT_EQ(shard.row(0.999999), 99);
}

// 200,000 draws over 1,000 rows at s = 1.2: each of the ten hottest rows'
// frequency within 4 standard errors of its probability, and a chi-square
// over 20 bins (the top 10 rows, then ten tail ranges) under its 0.999
// quantile (45.3 for 19 degrees of freedom).
TEST(ZipfIndices, DrawsMatchTheDistributionStatistically) {
  const int64_t rows = 1000, n = 200000;
  const auto draws = drawZipf(rows, 1.2, n, 42);
  std::vector<double> count(static_cast<size_t>(rows), 0);
  for (int64_t r : draws) {
    ASSERT_GE(r, 0);
    ASSERT_LT(r, rows);
    count[size_t(r)] += 1;
  }
  const ZipfCdf cdf(rows, 1.2);
  for (int64_t i = 0; i < 10; ++i) {
    const double p = cdf.probability(i);
    const double se = std::sqrt(p * (1 - p) / double(n));
    EXPECT_NEAR(count[size_t(i)] / double(n), p, 4 * se) << "row " << i;
  }
  std::vector<std::pair<int64_t, int64_t>> bins;
  for (int64_t i = 0; i < 10; ++i) bins.push_back({i, i + 1});
  const int64_t edges[] = {10, 20, 40, 70, 100, 150, 250, 400, 600, 800, 1000};
  for (size_t k = 0; k + 1 < std::size(edges); ++k) bins.push_back({edges[k], edges[k + 1]});
  double chi2 = 0;
  for (const auto& [a, b] : bins) {
    double observed = 0, p = 0;
    for (int64_t i = a; i < b; ++i) {
      observed += count[size_t(i)];
      p += cdf.probability(i);
    }
    const double expected = p * double(n);
    chi2 += (observed - expected) * (observed - expected) / expected;
  }
  EXPECT_LT(chi2, 45.3) << "chi-square over " << bins.size() << " bins";
}

// The point of Zipf tables: far fewer distinct rows than uniform indices.
// 15,360 lookups (512 bags x 30) into 200,000 rows: uniform touches ~96% of
// its lookups as distinct rows; Zipf 1.05 about a third, Zipf 1.2 fewer still.
TEST(ZipfIndices, SkewedIndicesTouchFewerRows) {
  const int64_t rows = 200000, n = 15360;
  auto distinct = [&](double s) {
    const auto d = drawZipf(rows, s, n, 7);
    return double(std::set<int64_t>(d.begin(), d.end()).size()) / double(n);
  };
  const double uniform = distinct(0.0);
  const double z105 = distinct(1.05);
  const double z12 = distinct(1.2);
  EXPECT_GT(uniform, 0.9);
  EXPECT_LT(z105, 0.6);
  EXPECT_LT(z12, z105);
  // low shifts the rows: a tensor_range [100, 199] draws 100..199.
  for (int64_t r : drawZipf(100, 1.1, 1000, 3, 100)) {
    EXPECT_GE(r, 100);
    EXPECT_LE(r, 199);
  }
  EXPECT_EQ(drawZipf(rows, 1.05, 100, 9), drawZipf(rows, 1.05, 100, 9)) << "deterministic";
}

TEST(ZipfIndices, BadTablesAreUsageErrors) {
  EXPECT_THROW(ZipfCdf(0, 1.0), UsageError);
  EXPECT_THROW(ZipfCdf(10, -1.0), UsageError);
  EXPECT_THROW(ZipfCdf(10, std::nan("")), UsageError);
}

core::Node lookup() {
  testing::GraphBuilder b;
  using testing::boolValue;
  using testing::intValue;
  using testing::tensorValue;
  return b.op(core::schemas::kEmbeddingBag,
              {tensorValue(10, 10, {20000, 16}), tensorValue(11, 11, {1280}, "long", 8),
               tensorValue(12, 12, {128}, "long", 8), boolValue(false), intValue(0),
               boolValue(false), testing::noneValue(), boolValue(false), intValue(-1)},
              {});
}

TEST(ZipfIndices, ASideFileTurnsALookupsIndicesZipf) {
  const core::Node n = lookup();
  EXPECT_TRUE(isLookupIndices(n, 1));
  EXPECT_FALSE(isLookupIndices(n, 2)) << "offsets";
  auto fill = withIndexDistribution(integerFillFor(n, 1, -1), n, 1, 1.05);
  ASSERT_TRUE(fill);
  EXPECT_EQ(fill->kind, IntFill::Kind::kZipf);
  EXPECT_EQ(fill->low, 0);
  EXPECT_EQ(fill->high, 19999);
  EXPECT_DOUBLE_EQ(fill->exponent, 1.05);
  EXPECT_NE(fill->rule.find("Zipf"), std::string::npos);
  EXPECT_EQ(fill->zipf_first_row, 0);
  const auto shard =
      withIndexDistribution(integerFillFor(n, 1, -1), n, 1, core::IndexLaw{1.05, 40000});
  EXPECT_EQ(shard->zipf_first_row, 40000) << "the law's tail; the rows drawn stay [0, 19999]";
  EXPECT_EQ(shard->high, 19999);
  EXPECT_NE(shard->rule.find("from the table's row 40000"), std::string::npos) << shard->rule;
  // Offsets stay offsets; exponent 0 stays uniform.
  EXPECT_EQ(withIndexDistribution(integerFillFor(n, 2, -1), n, 2, 1.05)->kind,
            IntFill::Kind::kOffsets);
  EXPECT_EQ(withIndexDistribution(integerFillFor(n, 1, -1), n, 1, 0.0)->kind,
            IntFill::Kind::kUniform);
}

TEST(ZipfIndices, ALookupTheReplayCouldNotDrawIsAnInputError) {
  EXPECT_EQ(checkIndexDistributions({{5, 1.1}, {6, 0.0}}, {5}), 1);
  // Uniform entries not drawn change nothing; a Zipf one would.
  EXPECT_EQ(checkIndexDistributions({{6, 0.0}}, {}), 0);
  try {
    checkIndexDistributions({{5, 1.1}, {7, 1.2}}, {5});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("op(s) 7"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tracetwin::replay
