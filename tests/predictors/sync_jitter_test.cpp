// The arrival-jitter model's statistics, checked against closed forms
// (predictors/comm/sync_jitter.h).
#include "predictors/comm/sync_jitter.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/errors.h"
#include "predictors/comm/comm_model.h"

namespace tracetwin::predictors {
namespace {

double phi(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI); }
double bigPhi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

TEST(SyncJitter, TheExpectedMaximumOfStandardNormalsHasItsKnownValues) {
  EXPECT_EQ(expectedMaxStandardNormal(1), 0.0);
  EXPECT_NEAR(expectedMaxStandardNormal(2), 1 / std::sqrt(M_PI), 1e-9);    // 0.5642
  EXPECT_NEAR(expectedMaxStandardNormal(3), 1.5 / std::sqrt(M_PI), 1e-9);  // 0.8463
  EXPECT_NEAR(expectedMaxStandardNormal(4), 1.0293753730, 1e-8);
  // Grows like sqrt(2 ln n) for many ranks, slowly: 3.24 at 1,000.
  EXPECT_NEAR(expectedMaxStandardNormal(1000), 3.2414, 1e-3);
  EXPECT_GT(expectedMaxStandardNormal(16384), expectedMaxStandardNormal(1024));
}

TEST(SyncJitter, TheExpectedLatestArrivalOfTwoMatchesClarksFormula) {
  // E[max(X1, X2)] = m1 F(d) + m2 F(-d) + t f(d), t^2 = s1^2 + s2^2, d = (m1 - m2) / t.
  const double m1 = 100, m2 = 97, s1 = 2, s2 = 5;
  const double t = std::hypot(s1, s2), d = (m1 - m2) / t;
  const double clark = m1 * bigPhi(d) + m2 * bigPhi(-d) + t * phi(d);
  EXPECT_NEAR(expectedMaxOfNormals({m1, m2}, {s1, s2}), clark, 1e-6);
  // A member that just left a collective (sigma ~0) beside one that ran long:
  // the grid follows the wide one, within 0.1% of its sigma.
  const double tt = std::hypot(0.01, 5.0), dd = (m1 - m2) / tt;
  const double clark2 = m1 * bigPhi(dd) + m2 * bigPhi(-dd) + tt * phi(dd);
  EXPECT_NEAR(expectedMaxOfNormals({m1, m2}, {0.01, 5.0}), clark2, 5e-3);
}

TEST(SyncJitter, FixedArrivalsAndFarStragglersNeedNoIntegral) {
  EXPECT_DOUBLE_EQ(expectedMaxOfNormals({3, 9, 4}, {0, 0, 0}), 9);
  // A straggler 100 sigmas behind the others decides alone.
  EXPECT_DOUBLE_EQ(expectedMaxOfNormals({1000, 10, 12}, {0, 1, 1}), 1000);
  // Identical members: the closed form's constant.
  EXPECT_NEAR(expectedMaxOfNormals({50, 50, 50}, {2, 2, 2}), 50 + 2 * 1.5 / std::sqrt(M_PI), 1e-9);
  // A jittered member can only push the start later than the fixed latest.
  EXPECT_GE(expectedMaxOfNormals({10, 9}, {0, 3}), 10);
}

TEST(SyncJitter, SigmaGrowsWithTheRootOfTheTimeAndTakesTheNearestGroup) {
  SyncJitter j;
  j.variance_per_us = {{2, 100}, {4, 400}};
  EXPECT_DOUBLE_EQ(j.sigmaUs(2, 100), 100);  // sqrt(100 * 100)
  EXPECT_DOUBLE_EQ(j.sigmaUs(2, 400), 200);
  EXPECT_DOUBLE_EQ(j.sigmaUs(3, 100), 100);   // the largest measured size below 3
  EXPECT_DOUBLE_EQ(j.sigmaUs(64, 100), 200);  // above every measured size: the largest
  EXPECT_DOUBLE_EQ(j.sigmaUs(1, 100), 0);     // a group of one waits for no one
  EXPECT_DOUBLE_EQ(j.sigmaUs(2, 0), 0);
  SyncJitter only_four;
  only_four.variance_per_us = {{4, 400}};
  EXPECT_DOUBLE_EQ(only_four.sigmaUs(2, 100), 200);  // below every measured size: the smallest
}

TEST(SyncJitter, AVarianceFromAMeanWaitGivesThatWaitBack) {
  // Two ranks that waited 813 us on average after a 5.95 ms spacer.
  const double v = jitterVarianceFromWait(2, 813, 5950);
  SyncJitter j;
  j.variance_per_us[2] = v;
  EXPECT_NEAR(j.sigmaUs(2, 5950) * expectedMaxStandardNormal(2), 813, 1e-9);
  EXPECT_EQ(jitterVarianceFromWait(2, 0, 5950), 0.0);
  EXPECT_EQ(jitterVarianceFromWait(1, 813, 5950), 0.0);
}

TEST(SyncJitter, TheCommModelKeepsItAndRefusesBadFields) {
  AlphaBetaModel m;
  m.sync_jitter.variance_per_us = {{2, 525.5}, {3, 1328.6}};
  const auto back = AlphaBetaModel::fromJson(m.save("", ""), "");
  const auto* ab = dynamic_cast<const AlphaBetaModel*>(back.get());
  ASSERT_NE(ab, nullptr);
  EXPECT_EQ(ab->sync_jitter.variance_per_us, m.sync_jitter.variance_per_us);
  // A model without the field loads with no jitter (older model sets).
  const auto plain = AlphaBetaModel::fromJson(AlphaBetaModel().save("", ""), "");
  EXPECT_TRUE(dynamic_cast<const AlphaBetaModel*>(plain.get())->sync_jitter.empty());
  for (const char* bad :
       {R"({"variance_us2_per_us": {"1": 3}})", R"({"variance_us2_per_us": {"two": 3}})",
        R"({"variance_us2_per_us": {"2": -1}})", R"({"variance_us2_per_us": {"2": "x"}})",
        R"({"other": 1})"}) {
    EXPECT_THROW(SyncJitter::fromJson(nlohmann::json::parse(bad)), InputError) << bad;
  }
}

}  // namespace
}  // namespace tracetwin::predictors
