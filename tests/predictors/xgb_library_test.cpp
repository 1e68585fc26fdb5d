// predictors/kernels/xgb_library.h: XGBoost opened on first use, and the
// errors when it cannot be.
#include "predictors/kernels/xgb_library.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/errors.h"

namespace tracetwin::predictors {
namespace {

using ::testing::HasSubstr;

TEST(XgbLibrary, TheBuildsLibraryBindsEveryFunction) {
  const XgbApi& api = xgbApi();
  EXPECT_NE(api.XGBGetLastError, nullptr);
  EXPECT_NE(api.XGBoosterPredict, nullptr);
  EXPECT_NE(api.XGBoosterLoadModel, nullptr);
  EXPECT_EQ(&api, &xgbApi()) << "loaded once";
}

TEST(XgbLibrary, MissingLibraryNamesBothTries) {
  try {
    loadXgbApi("/nonexistent/libxgboost.so.1.6.0", "libxgboost-nonexistent.so.0");
    FAIL() << "no throw";
  } catch (const UnavailableError& e) {
    EXPECT_THAT(e.what(), HasSubstr("/nonexistent/libxgboost.so.1.6.0"));
    EXPECT_THAT(e.what(), HasSubstr("libxgboost-nonexistent.so.0"));
    EXPECT_THAT(e.what(), HasSubstr("libxgboost0"));
  }
}

TEST(XgbLibrary, ALibraryWithoutTheApiIsRefusedByName) {
  // zlib is loaded in every tracetwin process (gzip traces): present, but no XGBoost.
  try {
    loadXgbApi("/nonexistent/libxgboost.so", "libz.so.1");
    FAIL() << "no throw";
  } catch (const UnavailableError& e) {
    EXPECT_THAT(e.what(), HasSubstr("XGBGetLastError is missing from libz.so.1"));
  }
}

}  // namespace
}  // namespace tracetwin::predictors
