#include "predictors/models/model_set.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>  // getpid: one scratch directory per test process

#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/errors.h"
#include "predictors/comm/comm_model.h"
#include "predictors/kernels/analytic_models.h"
#include "predictors/kernels/xgb_model.h"
#include "predictors/models/training.h"
#include "tests/support/graphs.h"
#include "tests/support/paths.h"

namespace tracetwin::predictors {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using namespace tracetwin::testing;

class ModelSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tracetwin_models_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A ModelSet with an XGBoost GEMM model fitted on 200 synthetic mm samples:
  // a roofline, plus 40% for a short K (which the roofline cannot express)
  // and 30% for mm run interleaved with other ops.
  ModelSet fitted() {
    DeviceSpec d = loadDeviceSpec(sourcePath("configs/devices/h100.yaml"));
    std::mt19937_64 rng(1);
    std::vector<MeasuredOp> samples;
    for (int i = 0; i < 200; ++i) {
      int64_t m = int64_t{1} << (5 + rng() % 8), n = int64_t{1} << (5 + rng() % 8),
              k = int64_t{1} << (5 + rng() % 8);
      const bool repeated = i % 2 == 0;
      const double t =
          (3 + 2.0 * m * n * k / 500e12 * 1e6) * (k < 256 ? 1.4 : 1.0) * (repeated ? 1.0 : 1.3);
      samples.push_back(
          {opNode("aten::mm", {tensor({m, k}), tensor({k, n})}, {tensor({m, n})}), t, d.name, {}});
      samples.back().repeated = repeated;
    }
    ModelSet set;
    FitOptions opts;
    opts.torch_version = "1.13.1";
    opts.xgb_rounds = 30;
    fitModels(samples, d, opts, &set);
    return set;
  }

  std::string loadError(const std::string& expected_device = "") {
    try {
      ModelSet::load(dir_.string(), expected_device);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  }

  fs::path dir_;
};

TEST_F(ModelSetTest, SaveLoadRoundTripPredictsTheSame) {
  ModelSet set = fitted();
  set.overheads.t[0]["aten::mm"] = {7.5, 1.0, 10};
  set.save(dir_.string());
  EXPECT_TRUE(fs::exists(dir_ / "manifest.json"));
  EXPECT_TRUE(fs::exists(dir_ / "gemm.xgb.ubj"));
  ModelSet back = ModelSet::load(dir_.string(), "H100-SXM5-80GB");
  EXPECT_EQ(back.device.name, "H100-SXM5-80GB");
  EXPECT_EQ(back.torch_version, "1.13.1");
  EXPECT_FALSE(back.created.empty());
  EXPECT_DOUBLE_EQ(back.overheads.us(Overhead::kT1, "aten::mm"), 7.5);
  ASSERT_NE(back.model("gemm"), nullptr);
  EXPECT_EQ(back.model("gemm")->kind(), "xgboost");
  OpFeatures f = computeFeatures(
      opNode("aten::mm", {tensor({512, 256}), tensor({256, 1024})}, {tensor({512, 1024})}));
  EXPECT_NEAR(back.model("gemm")->predictUs(f, back.device),
              set.model("gemm")->predictUs(f, set.device), 1e-3);
  // The context column survives the round trip: the loaded model still
  // tells an mm among copies of itself from an interleaved one (1.3x apart).
  const double interleaved = back.model("gemm")->predictUs(f, back.device);
  f.repeated = true;
  const double alone = back.model("gemm")->predictUs(f, back.device);
  EXPECT_NEAR(alone, set.model("gemm")->predictUs(f, set.device), 1e-3);
  EXPECT_GT(interleaved / alone, 1.15);
}

// Sets written before the binary trees name `*.xgb.json` files (XGBoost's
// JSON): they still load, and predict what the same trees do in UBJSON.
TEST_F(ModelSetTest, TreesInXgboostsJsonStillLoad) {
  ModelSet set = fitted();
  set.save(dir_.string());
  nlohmann::json j;
  std::ifstream(dir_ / "manifest.json") >> j;
  Booster::loadWhenUsed((dir_ / "gemm.xgb.ubj").string(),
                        j["models"]["gemm"]["params"]["n_features"].get<size_t>())
      ->save((dir_ / "gemm.xgb.json").string());
  fs::remove(dir_ / "gemm.xgb.ubj");
  // The entry names its files, and so do the trees' own parameters.
  for (nlohmann::json* entry : {&j["models"]["gemm"], &j["models"]["gemm"]["params"]}) {
    ASSERT_EQ((*entry)["files"], nlohmann::json::array({"gemm.xgb.ubj"}));
    (*entry)["files"] = {"gemm.xgb.json"};
  }
  std::ofstream(dir_ / "manifest.json") << j.dump();
  std::ifstream json_file(dir_ / "gemm.xgb.json");
  ASSERT_EQ(json_file.get(), '{');  // JSON text, not UBJSON
  const ModelSet back = ModelSet::load(dir_.string(), "H100-SXM5-80GB");
  const OpFeatures f = computeFeatures(
      opNode("aten::mm", {tensor({512, 256}), tensor({256, 1024})}, {tensor({512, 1024})}));
  EXPECT_NEAR(back.model("gemm")->predictUs(f, back.device),
              set.model("gemm")->predictUs(f, set.device), 1e-3);
}

// A refit in place of such a set writes the binary trees and leaves no stale
// JSON copy of them behind.
TEST_F(ModelSetTest, SavingOverASetInJsonRemovesItsJsonTrees) {
  ModelSet set = fitted();
  fs::create_directories(dir_);
  std::ofstream(dir_ / "gemm.xgb.json") << "{}";
  std::ofstream(dir_ / "notes.json") << "{}";  // not a tree file: kept
  set.save(dir_.string());
  EXPECT_TRUE(fs::exists(dir_ / "gemm.xgb.ubj"));
  EXPECT_FALSE(fs::exists(dir_ / "gemm.xgb.json"));
  EXPECT_TRUE(fs::exists(dir_ / "notes.json"));
}

TEST_F(ModelSetTest, MissingModelFileIsNamed) {
  fitted().save(dir_.string());
  fs::remove(dir_ / "gemm.xgb.ubj");
  EXPECT_THAT(loadError(), HasSubstr("gemm.xgb.ubj: model file of family 'gemm' missing"));
}

TEST_F(ModelSetTest, ModelEntriesAndTheirFileListsAreChecked) {
  fitted().save(dir_.string());
  nlohmann::json j;
  std::ifstream(dir_ / "manifest.json") >> j;
  const auto withGemm = [&](const nlohmann::json& entry) {
    nlohmann::json changed = j;
    changed["models"]["gemm"] = entry;
    std::ofstream(dir_ / "manifest.json") << changed.dump();
    return loadError();
  };
  EXPECT_THAT(withGemm(5), HasSubstr("manifest.json: models.gemm: expected an object"));
  nlohmann::json entry = j["models"]["gemm"];
  entry["files"] = "gemm.xgb.json";
  EXPECT_THAT(withGemm(entry), HasSubstr("models.gemm.files: expected an array of file names"));
  // Before: nlohmann's type_error, reported as an internal error.
  entry["files"] = {3};
  EXPECT_THAT(withGemm(entry), HasSubstr("models.gemm.files: expected a file name in"));
  // A model set is one directory.
  entry["files"] = {"../gemm.xgb.json"};
  EXPECT_THAT(withGemm(entry), HasSubstr("got \"../gemm.xgb.json\""));
  // A list other than the files its params load (a hand edit; a copy of the
  // set by the list would leave its trees behind).
  for (const nlohmann::json& list : {nlohmann::json::array(), nlohmann::json{"conv.xgb.ubj"}}) {
    entry = j["models"]["gemm"];
    entry["files"] = list;
    EXPECT_THAT(withGemm(entry), HasSubstr("models.gemm.files is " + list.dump() +
                                           " but its params load [\"gemm.xgb.ubj\"]"));
  }
  // So is the device file.
  nlohmann::json outside = j;
  outside["device_file"] = "/etc/device.yaml";
  std::ofstream(dir_ / "manifest.json") << outside.dump();
  EXPECT_THAT(loadError(), HasSubstr("manifest.json: device_file: expected a file name in"));
}

TEST_F(ModelSetTest, CalibratedOpsWithoutTheirModelAreADamagedManifest) {
  fitted().save(dir_.string());
  nlohmann::json j;
  std::ifstream(dir_ / "manifest.json") >> j;
  ASSERT_TRUE(j["calibrated_ops"].contains("gemm"));
  j["models"].erase("gemm");
  std::ofstream(dir_ / "manifest.json") << j.dump();
  EXPECT_THAT(loadError(), HasSubstr("calibrated_ops.gemm lists"));
  EXPECT_THAT(loadError(), HasSubstr("but models.gemm is missing"));
}

// Found by a bad-input hunt: n_features -1 aborted in a reserve(), and a
// count the trees do not read failed inside XGBoosterPredict, naming neither.
TEST_F(ModelSetTest, AFeatureCountTheTreesDoNotReadIsNamed) {
  fitted().save(dir_.string());
  nlohmann::json j;
  std::ifstream(dir_ / "manifest.json") >> j;
  nlohmann::json& count = j["models"]["gemm"]["params"]["n_features"];
  const int64_t real = count.get<int64_t>();
  count = -1;
  std::ofstream(dir_ / "manifest.json") << j.dump();
  EXPECT_THAT(loadError(), HasSubstr("n_features must be a whole number from 0 to 2^53, got -1"));
  count = 1e300;  // was read as an int64_t: undefined behaviour
  std::ofstream(dir_ / "manifest.json") << j.dump();
  EXPECT_THAT(loadError(),
              HasSubstr("n_features must be a whole number from 0 to 2^53, got 1e+300"));
  count = 0;
  std::ofstream(dir_ / "manifest.json") << j.dump();
  EXPECT_THAT(loadError(), HasSubstr("n_features 0 is not a column count in 1..4096"));
  count = real + 2;
  std::ofstream(dir_ / "manifest.json") << j.dump();
  const ModelSet set = ModelSet::load(dir_.string());
  const OpFeatures f =
      computeFeatures(opNode("aten::mm", {tensor({64, 64}), tensor({64, 64})}, {tensor({64, 64})}));
  try {
    set.model("gemm")->predictUs(f, set.device);
    ADD_FAILURE() << "trees predicted from a wrong column count";
  } catch (const InputError& e) {
    EXPECT_THAT(std::string(e.what()),
                HasSubstr(fmt::format("gemm.xgb.ubj: the trees read {} features, the manifest's "
                                      "n_features is {}",
                                      real, real + 2)));
  }
}

// Trees are read when a prediction first needs them (Booster::loadWhenUsed):
// a corrupt file is named then, as an InputError, every time it is asked for.
TEST_F(ModelSetTest, ACorruptBoosterFileIsNamedWithoutXgboostsStackTrace) {
  fitted().save(dir_.string());
  std::ofstream(dir_ / "gemm.xgb.ubj") << "hello";
  const ModelSet set = ModelSet::load(dir_.string());
  ASSERT_NE(set.model("gemm"), nullptr);
  const OpFeatures f =
      computeFeatures(opNode("aten::mm", {tensor({64, 64}), tensor({64, 64})}, {tensor({64, 64})}));
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      set.model("gemm")->predictUs(f, set.device);
      ADD_FAILURE() << "a corrupt tree file predicted";
    } catch (const InputError& e) {
      const std::string error = e.what();
      EXPECT_THAT(error, HasSubstr("gemm.xgb.ubj: cannot load XGBoost model: "));
      EXPECT_EQ(error.find("Stack trace"), std::string::npos) << error;
      EXPECT_EQ(error.find("[bt]"), std::string::npos) << error;
    }
  }
  // Saving the set reads the trees too: the corrupt file is named, not copied.
  try {
    set.save((dir_ / "copy").string());
    ADD_FAILURE() << "a corrupt tree file was saved";
  } catch (const InputError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("gemm.xgb.ubj: cannot load XGBoost model: "));
  }
}

// Loading a set reads no trees: with a family's file moved away after the
// load, it is the first prediction of that family that fails; once the file
// is back, that prediction reads the trees and predicts as the fitted set.
TEST_F(ModelSetTest, TreesAreReadWhenAPredictionFirstNeedsThem) {
  const ModelSet set = fitted();
  set.save(dir_.string());
  const OpFeatures f = computeFeatures(
      opNode("aten::mm", {tensor({512, 256}), tensor({256, 1024})}, {tensor({512, 1024})}));
  {
    const ModelSet unread = ModelSet::load(dir_.string());
    fs::rename(dir_ / "gemm.xgb.ubj", dir_ / "moved.xgb.ubj");
    ASSERT_NE(unread.model("gemm"), nullptr);  // loaded, its trees not read
    EXPECT_THROW(unread.model("gemm")->predictUs(f, unread.device), InputError);
    fs::rename(dir_ / "moved.xgb.ubj", dir_ / "gemm.xgb.ubj");
    EXPECT_NEAR(unread.model("gemm")->predictUs(f, unread.device),
                set.model("gemm")->predictUs(f, set.device), 1e-3);
  }
  // A file missing at load is still refused at load.
  fs::remove(dir_ / "gemm.xgb.ubj");
  EXPECT_THAT(loadError(), HasSubstr("gemm.xgb.ubj: model file of family 'gemm' missing"));
}

TEST_F(ModelSetTest, MissingManifestIsNamed) {
  fs::create_directories(dir_);
  EXPECT_THAT(loadError(), HasSubstr("manifest.json: missing"));
}

TEST_F(ModelSetTest, StepCostsLoadWithoutTheKernelModels) {
  fs::create_directories(dir_);
  // No manifest: nothing to keep, which a refit must not mistake for "no costs".
  EXPECT_THROW(ModelSet::loadStepCosts(dir_.string()), InputError);
  ModelSet set = fitted();
  set.overheads.t[static_cast<int>(Overhead::kT1)][kAllOps] = {0.5, 0.0, 10};
  set.save(dir_.string());
  for (const std::string& family : set.families()) fs::remove(dir_ / (family + kXgbModelExtension));
  const ModelSet costs = ModelSet::loadStepCosts(dir_.string());
  EXPECT_EQ(costs.overheads.toJson(), set.overheads.toJson());
  EXPECT_TRUE(costs.families().empty());
  // A manifest of another format is still an error.
  std::ofstream(dir_ / "manifest.json") << R"({"format": "something-else"})";
  EXPECT_THROW(ModelSet::loadStepCosts(dir_.string()), InputError);
}

// The comm model comes along (the comm sweep's fit, not in a dataset); a
// damaged entry is named.
TEST_F(ModelSetTest, StepCostsKeepTheCommModelAndNameADamagedOne) {
  ModelSet set = fitted();
  auto comm = std::make_shared<AlphaBetaModel>();
  comm->per_collective["all_reduce"] = {3e-4, 2e-9};
  set.setModel("comm", comm);
  set.save(dir_.string());
  const ModelSet costs = ModelSet::loadStepCosts(dir_.string());
  EXPECT_EQ(costs.families(), std::vector<std::string>{"comm"});
  const auto* kept = dynamic_cast<const AlphaBetaModel*>(costs.model("comm"));
  ASSERT_NE(kept, nullptr);
  EXPECT_DOUBLE_EQ(kept->per_collective.at("all_reduce").beta_s_per_byte, 2e-9);
  nlohmann::json manifest;
  std::ifstream(dir_ / "manifest.json") >> manifest;
  manifest["models"]["comm"] = 5;
  std::ofstream(dir_ / "manifest.json") << manifest.dump();
  try {
    ModelSet::loadStepCosts(dir_.string());
    ADD_FAILURE() << "a damaged comm entry loaded";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("manifest.json: models.comm: expected an object"));
  }
}

TEST_F(ModelSetTest, StaleFormatVersionAndDeviceMismatchAreErrors) {
  fitted().save(dir_.string());
  EXPECT_THAT(loadError("A100-SXM4-80GB"),
              HasSubstr("calibrated on 'H100-SXM5-80GB', expected 'A100-SXM4-80GB'"));
  std::ifstream in(dir_ / "manifest.json");
  nlohmann::json j;
  in >> j;
  j["format_version"] = 0;
  std::ofstream(dir_ / "manifest.json") << j.dump();
  EXPECT_THAT(loadError(), HasSubstr("manifest.json: stale model set: format version 0"));
}

TEST_F(ModelSetTest, UnknownModelKindListsKnownOnes) {
  ModelSet set;
  set.device = loadDeviceSpec(sourcePath("configs/devices/h100.yaml"));
  set.setModel("view", std::make_shared<ConstantModel>());
  set.save(dir_.string());
  std::ifstream in(dir_ / "manifest.json");
  nlohmann::json j;
  in >> j;
  j["models"]["view"]["kind"] = "neural";
  std::ofstream(dir_ / "manifest.json") << j.dump();
  EXPECT_THAT(loadError(),
              HasSubstr("unknown model kind 'neural' (known: alpha_beta, bandwidth_curve"));
}

// The booster's context columns (whether the op follows a copy of itself;
// the inputs' reuse distance, where spaced samples gave one) must lie in its
// row and apart.
TEST_F(ModelSetTest, ContextColumnsOutOfRangeAreErrors) {
  fitted().save(dir_.string());
  std::ifstream in(dir_ / "manifest.json");
  nlohmann::json j;
  in >> j;
  const nlohmann::json params = j["models"]["gemm"]["params"];
  const size_t repeated = params["repeated_column"].get<size_t>();
  ASSERT_EQ(repeated, params["n_features"].get<size_t>() - 1);
  ASSERT_FALSE(params.contains("reuse_column"));  // no spaced samples: no column
  const std::pair<const char*, size_t> bad[] = {
      {"repeated_column", 99}, {"reuse_column", 99}, {"reuse_column", repeated}};
  for (const auto& [key, value] : bad) {
    j["models"]["gemm"]["params"] = params;
    j["models"]["gemm"]["params"][key] = value;
    std::ofstream(dir_ / "manifest.json") << j.dump();
    EXPECT_THAT(loadError(), HasSubstr(fmt::format("{} {} is not below n_features", key, value)));
  }
  j["models"]["gemm"]["params"] = params;
  j["models"]["gemm"]["params"]["repeated_column"] = 1e300;  // was read as a size_t
  std::ofstream(dir_ / "manifest.json") << j.dump();
  EXPECT_THAT(loadError(), HasSubstr("repeated_column must be a whole number from 0 to 2^53"));
}

TEST_F(ModelSetTest, CalibratedOpNamesRoundTripAndBadListsAreErrors) {
  ModelSet set = fitted();
  ASSERT_EQ(set.calibrated_ops.at("gemm"), std::set<std::string>{"aten::mm"});
  set.save(dir_.string());
  const ModelSet back = ModelSet::load(dir_.string());
  EXPECT_EQ(back.calibrated_ops, set.calibrated_ops);
  EXPECT_FALSE(back.calibrated("gemm", "aten::addmm"));
  std::ifstream in(dir_ / "manifest.json");
  nlohmann::json j;
  in >> j;
  // Model sets from before the list load and count every op as calibrated.
  nlohmann::json old = j;
  old.erase("calibrated_ops");
  std::ofstream(dir_ / "manifest.json") << old.dump();
  EXPECT_TRUE(ModelSet::load(dir_.string()).calibrated("gemm", "aten::addmm"));
  j["calibrated_ops"]["gemm"] = {"aten::mm", 7};
  std::ofstream(dir_ / "manifest.json") << j.dump();
  EXPECT_THAT(loadError(), HasSubstr("calibrated_ops.gemm: expected op names (strings), got 7"));
  j["calibrated_ops"] = {"aten::mm"};
  std::ofstream(dir_ / "manifest.json") << j.dump();
  EXPECT_THAT(loadError(), HasSubstr("'calibrated_ops' must be an object of op-name lists"));
}

TEST(ModelSet, UnknownFamilyIsRejected) {
  ModelSet set;
  try {
    set.setModel("gemmm", std::make_shared<ConstantModel>());
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown op family 'gemmm' (known: gemm, conv"));
  }
}

TEST(Overheads, ReadsLinkFormatAndRejectsBadFiles) {
  auto path = fs::temp_directory_path() / "tracetwin_overheads_test.json";
  std::ofstream(path) << R"({"format":"tracetwin-overheads/1","sources":["x.json"],
    "t1":{"__all__":{"median_us":4.5,"iqr_us":1,"count":10}},
    "t2":{"aten::mm":{"median_us":11,"iqr_us":2,"count":3}},"t3":{},"t4":{},"t5":{}})";
  OverheadTable t = loadOverheads(path.string());
  EXPECT_DOUBLE_EQ(t.us(Overhead::kT1, "aten::relu"), 4.5);
  EXPECT_DOUBLE_EQ(t.us(Overhead::kT2, "aten::mm"), 11);
  bool used_default = false;
  EXPECT_DOUBLE_EQ(t.us(Overhead::kT4, "aten::mm", &used_default),
                   defaultOverheadUs(Overhead::kT4));
  EXPECT_TRUE(used_default);
  std::ofstream(path)
      << R"({"format":"tracetwin-overheads/1","t1":{"__all__":{"median_us":"x","iqr_us":1,"count":1}}})";
  try {
    loadOverheads(path.string());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("t1[\"__all__\"]: expected number 'median_us'"));
  }
  std::ofstream(path) << R"({"format":"other"})";
  EXPECT_THROW(loadOverheads(path.string()), InputError);
  auto errorOf = [&](const std::string& text) {
    std::ofstream(path) << text;
    try {
      loadOverheads(path.string());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("read");
  };
  EXPECT_THAT(errorOf("{"), HasSubstr("invalid JSON"));
  // A number no double holds was nlohmann's out_of_range, which ended the process.
  EXPECT_THAT(
      errorOf(
          R"({"format":"tracetwin-overheads/1","t1":{"__all__":{"median_us":1e999,"iqr_us":1,"count":1}}})"),
      HasSubstr("invalid JSON: [json.exception.out_of_range.406]"));
  fs::remove(path);
}

// A count of 1e300 was cast to int64_t (undefined behaviour, found by
// fuzz/model_set_fuzz under UBSan), and a gap of 1e17 us (longer than any
// Kineto trace can hold) was charged, the prediction then blaming the model
// set's files for the step.
TEST(Overheads, RefusesTimesAndCountsNoMeasurementGives) {
  auto errorWith = [](const char* key, double value) {
    nlohmann::json j = {{"format", "tracetwin-overheads/1"},
                        {"t2", {{"aten::mm", {{"median_us", 11}, {"iqr_us", 2}, {"count", 3}}}}}};
    j["t2"]["aten::mm"][key] = value;
    try {
      OverheadTable::fromJson(j, "o.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(errorWith("median_us", 1e17),
            "o.json: t2[\"aten::mm\"]: median_us must be from 0 to 2^55 us, got 1e+17");
  EXPECT_THAT(errorWith("iqr_us", -1), HasSubstr("iqr_us must be from 0 to 2^55 us, got -1"));
  EXPECT_THAT(errorWith("mean_us", 1e300), HasSubstr("mean_us must be from 0"));
  EXPECT_THAT(
      errorWith("count", 1e300),
      HasSubstr(
          "o.json: t2[\"aten::mm\"]: count must be a whole number from 0 to 2^53, got 1e+300"));
  EXPECT_THAT(errorWith("count", 2.5), HasSubstr("got 2.5"));
  EXPECT_THAT(errorWith("count", -1), HasSubstr("got -1"));
  EXPECT_EQ(errorWith("median_us", 9e15), "accepted");
  EXPECT_EQ(errorWith("count", 0), "accepted");
}

}  // namespace
}  // namespace tracetwin::predictors
