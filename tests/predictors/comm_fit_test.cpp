// Alpha-beta communication models fitted from measured collectives
// (predictors/comm/comm_fit.h), with samples made from known parameters.
#include "predictors/comm/comm_fit.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/errors.h"
#include "predictors/kernels/features.h"
#include "predictors/specs/device_spec.h"

namespace tracetwin::predictors {
namespace {

// t = L(p) alpha + F(p) n beta for the collective's terms.
double alphaBeta(const std::string& c, int64_t p, double n, double alpha, double beta) {
  const AlphaBetaTerms t = alphaBetaTerms(c, p);
  return t.latency_steps * alpha + t.byte_factor * n * beta;
}

TEST(CommFit, RecoversOneRegimeOverSizesAndGroupSizes) {
  std::vector<CommSample> samples;
  for (int64_t p : {2, 3, 4}) {
    for (double n : {1e3, 1e4, 1e5, 1e6, 1e7}) {
      for (double jitter : {0.98, 1.0, 1.02})  // the median is the middle one
        samples.push_back({"all_reduce", p, n, jitter * alphaBeta("all_reduce", p, n, 20e-6, 1e-9)});
    }
  }
  const CommFit fit = fitCommModels(samples);
  ASSERT_EQ(fit.collectives.size(), 1u);
  const CommCollectiveFit& c = fit.collectives[0];
  ASSERT_EQ(c.regimes.size(), 1u);
  EXPECT_NEAR(c.regimes[0].params.alpha_s, 20e-6, 1e-9);
  EXPECT_NEAR(c.regimes[0].params.beta_s_per_byte, 1e-9, 1e-13);
  EXPECT_LT(c.mean_abs_error, 1e-6);
  EXPECT_EQ(fit.points.size(), 15u);
  for (const CommPoint& p : fit.points) EXPECT_EQ(p.samples, 3);
}

TEST(CommFit, ASizeRegimeIsFoundWhereTheAlgorithmChanges) {
  // Latency-bound below 64 KiB (alpha 5 us, 1/beta 2 GB/s), bandwidth-bound
  // above (alpha 60 us, 1/beta 10 GB/s): ring versus tree, say.
  std::vector<CommSample> samples;
  for (int64_t p : {2, 4}) {
    for (double n : {1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0}) {
      const bool small = n <= 65536;
      samples.push_back({"all_gather", p, n,
                         alphaBeta("all_gather", p, n, small ? 5e-6 : 60e-6,
                                   small ? 0.5e-9 : 0.1e-9)});
    }
  }
  const CommFit fit = fitCommModels(samples);
  ASSERT_EQ(fit.collectives.size(), 1u);
  const auto& r = fit.collectives[0].regimes;
  ASSERT_EQ(r.size(), 2u);
  EXPECT_DOUBLE_EQ(r[0].up_to_bytes, 65536);
  EXPECT_NEAR(r[0].params.alpha_s, 5e-6, 1e-9);
  EXPECT_NEAR(r[1].params.alpha_s, 60e-6, 1e-9);
  EXPECT_NEAR(1 / r[1].params.beta_s_per_byte, 10e9, 1e3);
  // The model predicts each side with its own regime.
  AlphaBetaModel m;
  applyCommFit(fit, &m);
  OpFeatures f;
  f.collective = "all_gather";
  f.world_size = 4;
  f.message_bytes = 16384;
  EXPECT_NEAR(m.predictUs(f, DeviceSpec{}), 1e6 * alphaBeta("all_gather", 4, 16384, 5e-6, 0.5e-9),
              1e-3);
  f.message_bytes = 4194304;
  EXPECT_NEAR(m.predictUs(f, DeviceSpec{}),
              1e6 * alphaBeta("all_gather", 4, 4194304, 60e-6, 0.1e-9), 1e-3);
}

TEST(CommFit, ARegimeRestsOnTwoNominalSizesNotOneRoundedPerGroupSize) {
  // The sweep rounds each size to a multiple of the group size (16 MiB is
  // 16,777,212 B on 3 ranks). One alpha-beta everywhere but the largest size,
  // three times slower: a split above 4 MiB would rest on 16 MiB alone.
  std::vector<CommSample> samples;
  for (int64_t p : {2, 3, 4}) {
    for (double n = 1024; n <= 16777216; n *= 4) {
      const double bytes = std::floor(n / double(p)) * double(p);
      const double t = alphaBeta("broadcast", p, bytes, 30e-6, 0.4e-9);
      samples.push_back({"broadcast", p, bytes, n == 16777216 ? 3 * t : t});
    }
  }
  const CommFit fit = fitCommModels(samples);
  ASSERT_EQ(fit.collectives.size(), 1u);
  const auto& r = fit.collectives[0].regimes;
  for (size_t i = 0; i + 1 < r.size(); ++i) {
    EXPECT_LT(r[i].up_to_bytes, 4194000) << "regime " << i << " leaves one size above it";
  }
}

TEST(CommFit, BusBandwidthFollowsNcclTests) {
  // 8 ranks, 1 GB all-reduce in 0.1 s: algbw 10 GB/s, busbw 2*7/8 of it.
  const CommFit fit = fitCommModels({{"allreduce", 8, 1e9, 0.1}, {"all_reduce", 8, 1e6, 1e-3}});
  ASSERT_EQ(fit.points.size(), 2u);
  const CommPoint& big = fit.points[1];
  EXPECT_EQ(big.collective, "all_reduce");  // spellings canonicalised
  EXPECT_DOUBLE_EQ(big.algbw_gbps, 10);
  EXPECT_DOUBLE_EQ(big.busbw_gbps, 10 * 2 * 7.0 / 8);
}

TEST(CommFit, OnePointIsNotEnoughAndGroupsOfOneMoveNothing) {
  const CommFit fit = fitCommModels({{"broadcast", 2, 1e6, 1e-3}, {"all_reduce", 1, 1e6, 1e-3}});
  EXPECT_TRUE(fit.collectives.empty());
  ASSERT_EQ(fit.notes.size(), 1u);
  EXPECT_NE(fit.notes[0].find("broadcast: 1 point"), std::string::npos);
}

TEST(CommFit, RegimesSurviveTheModelFile) {
  AlphaBetaModel m;
  m.regimes["all_reduce"] = {{65536, {5e-6, 1e-9}}, {AlphaBetaModel::kAnySize, {40e-6, 2e-10}}};
  m.per_collective["all_reduce"] = {40e-6, 2e-10};
  const auto back = AlphaBetaModel::fromJson(m.save("", ""), "");
  const auto* ab = dynamic_cast<const AlphaBetaModel*>(back.get());
  ASSERT_NE(ab, nullptr);
  ASSERT_EQ(ab->regimes.at("all_reduce").size(), 2u);
  EXPECT_DOUBLE_EQ(ab->paramsFor("all_reduce", 1000).alpha_s, 5e-6);
  EXPECT_DOUBLE_EQ(ab->paramsFor("all_reduce", 1e9).alpha_s, 40e-6);
  // Bounds must grow.
  nlohmann::json bad = m.save("", "");
  bad["regimes"]["all_reduce"][1]["up_to_bytes"] = 100;
  EXPECT_THROW(AlphaBetaModel::fromJson(bad, ""), InputError);
}

}  // namespace
}  // namespace tracetwin::predictors
