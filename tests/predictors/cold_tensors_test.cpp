#include "predictors/host/cold_tensors.h"

#include <gtest/gtest.h>

#include "core/errors.h"

namespace tracetwin::predictors {
namespace {

ColdTensorPair pair(const std::string& family, double hot, double cold, double tensors,
                    double bytes = 0) {
  ColdTensorPair p;
  p.op = "aten::x";
  p.family = family;
  p.hot_us = hot;
  p.cold_us = cold;
  p.tensors = tensors;
  p.bytes = bytes;
  return p;
}

TEST(ColdTensors, FitIsTheMedianPerTensorLessTheDramTime) {
  const double dram = 10e9;  // bytes/s: 10 KB take 1 us
  const std::vector<ColdTensorPair> pairs = {
      pair("elementwise", 1.0, 1.6, 2),          // 0.3 per tensor
      pair("elementwise", 0.5, 1.4, 3),          // 0.3
      pair("elementwise", 2.0, 3.8, 2, 10000),   // (1.8 - 1.0) / 2 = 0.4
      pair("view", 0.4, 0.5, 1),                 // 0.1
      pair("view", 0.4, 0.3, 1),                 // faster cold: 0, not negative; two view
                                                 // pairs, below kMinPairs
      pair("norm", 0, 2.0, 1),                   // no hot time: left out
  };
  const ColdTensorModel m = fitColdTensors(pairs, dram);
  EXPECT_EQ(m.pairs, 5);
  ASSERT_EQ(m.per_family_us.count("elementwise"), 1u);
  EXPECT_NEAR(m.per_family_us.at("elementwise"), 0.3, 1e-9);
  EXPECT_EQ(m.per_family_us.count("view"), 0u);
  EXPECT_NEAR(m.all_us, 0.3, 1e-9);  // median of 0.3, 0.3, 0.4, 0.1, 0
  EXPECT_NEAR(m.perTensorUs("view"), 0.3, 1e-9);
  EXPECT_TRUE(fitColdTensors({}, dram).empty());
}

TEST(ColdTensors, JsonRoundTripsAndRejectsBadFields) {
  ColdTensorModel m;
  m.pairs = 12;
  m.all_us = 0.41;
  m.per_family_us = {{"elementwise", 0.35}};
  const ColdTensorModel back = ColdTensorModel::fromJson(m.toJson(), "manifest.json");
  EXPECT_EQ(back.toJson(), m.toJson());
  nlohmann::json bad = m.toJson();
  bad["all_us"] = -1;
  EXPECT_THROW(ColdTensorModel::fromJson(bad, "manifest.json"), InputError);
  bad = m.toJson();
  bad.erase("pairs");
  EXPECT_THROW(ColdTensorModel::fromJson(bad, "manifest.json"), InputError);
  EXPECT_THROW(ColdTensorModel::fromJson(nlohmann::json::array(), "manifest.json"), InputError);
}

}  // namespace
}  // namespace tracetwin::predictors
