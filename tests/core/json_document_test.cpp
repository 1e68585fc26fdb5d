#include "core/json_document.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/errors.h"

namespace tracetwin::core {
namespace {

using ::testing::HasSubstr;

std::string errorOf(const std::string& text) {
  try {
    parseJsonDocument(text, "m.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "parsed";
}

TEST(JsonDocument, ParsesAndNamesTheFileOfEveryError) {
  EXPECT_EQ(parseJsonDocument(R"({"t0_us": 1.5})", "m.json")["t0_us"].get<double>(), 1.5);
  EXPECT_THAT(errorOf(R"({"t0_us": })"), HasSubstr("m.json: byte 11: invalid JSON"));
  // nlohmann reports a number no double holds as out_of_range, not as a
  // parse error: a model manifest holding one ended the process.
  EXPECT_THAT(errorOf(R"({"t0_us": 46.4965e8503070716})"),
              HasSubstr("m.json: invalid JSON: [json.exception.out_of_range.406] number overflow"));
  EXPECT_THAT(errorOf(""), HasSubstr("m.json: byte 1: invalid JSON"));
}

}  // namespace
}  // namespace tracetwin::core
