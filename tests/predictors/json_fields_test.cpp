#include "predictors/models/json_fields.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/errors.h"

namespace tracetwin::predictors {
namespace {

using ::testing::HasSubstr;

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(JsonFields, RequiredNumberNamesTheObjectAndKey) {
  const nlohmann::json j = {{"t0_us", 1.5}, {"eff", "fast"}};
  EXPECT_DOUBLE_EQ(requiredNumber(j, "t0_us", "roofline model"), 1.5);
  EXPECT_EQ(errorOf([&] { requiredNumber(j, "eff", "roofline model"); }),
            "roofline model: expected number 'eff'");
  EXPECT_EQ(errorOf([&] { requiredNumber(j, "missing", "m.json: code_cold"); }),
            "m.json: code_cold: expected number 'missing'");
}

TEST(JsonFields, OptionalNumberMapIsEmptyWhenAbsentAndChecksEachEntry) {
  const nlohmann::json j = {{"op_us", {{"aten::t", 1.0}, {"aten::view", 0.5}}},
                            {"negative", {{"aten::t", -1.0}}},
                            {"text", {{"aten::t", "x"}}},
                            {"list", {1, 2}}};
  EXPECT_TRUE(optionalNumberMap(j, "absent", "m").empty());
  const auto op_us = optionalNumberMap(j, "op_us", "m");
  ASSERT_EQ(op_us.size(), 2u);
  EXPECT_DOUBLE_EQ(op_us.at("aten::view"), 0.5);
  EXPECT_DOUBLE_EQ(optionalNumberMap(j, "negative", "m").at("aten::t"), -1.0);
  EXPECT_THAT(errorOf([&] { optionalNumberMap(j, "negative", "x.json: code_cold", 0.0); }),
              HasSubstr("x.json: code_cold.negative[\"aten::t\"]: expected a number >= 0"));
  EXPECT_THAT(errorOf([&] { optionalNumberMap(j, "text", "m"); }),
              HasSubstr("m.text[\"aten::t\"]: expected a number"));
  EXPECT_EQ(errorOf([&] { optionalNumberMap(j, "list", "m"); }), "m.list: expected an object");
}

}  // namespace
}  // namespace tracetwin::predictors
