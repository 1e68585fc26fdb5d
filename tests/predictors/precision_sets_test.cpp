// A model set's precision sets: the kernel models of ops that ran in bf16 or
// fp16 (ModelSet::precision_sets), saved in DIR/<dtype> and chosen per op.
#include <gtest/gtest.h>
#include <unistd.h>  // getpid: one scratch directory per test process

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include "core/errors.h"
#include "core/trace_reader.h"
#include "predictors/kernels/analytic_models.h"
#include "predictors/kernels/feature_shapes.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/predictor.h"
#include "tests/support/graphs.h"
#include "tests/support/paths.h"
#include "tests/support/values.h"

namespace tracetwin::predictors {
namespace {

namespace fs = std::filesystem;
using core::DType;

std::shared_ptr<const KernelModel> constantUs(double us) {
  auto m = std::make_shared<ConstantModel>();
  m->default_us = us;
  return m;
}

DeviceSpec hostCpu(const std::string& name = "host-cpu") {
  DeviceSpec d = loadDeviceSpec(testing::sourcePath("data/models/host/device.yaml"));
  d.name = name;
  return d;
}

// gemm at 7 us for float32 ops; its bfloat16 set's gemm at 100 us, fitted on
// aten::mm only; no copy model in the bfloat16 set.
ModelSet withBf16Gemm(const std::string& bf16_device = "host-cpu") {
  ModelSet set;
  set.device = hostCpu();
  set.setModel("gemm", constantUs(7));
  set.setModel("copy", constantUs(3));
  auto bf16 = std::make_shared<ModelSet>();
  bf16->device = hostCpu(bf16_device);
  bf16->setModel("gemm", constantUs(100));
  bf16->calibrated_ops["gemm"] = {"aten::mm"};
  set.precision_sets[DType::kBFloat16] = bf16;
  return set;
}

core::Node mm(DType in, DType out) {
  return testing::opNode(
      "aten::mm",
      {testing::tensor({64, 64}, in, 0, "cpu"), testing::tensor({64, 64}, in, 0, "cpu")},
      {testing::tensor({64, 64}, out, 0, "cpu")});
}

TEST(HalfPrecision, AnyHalfTensorOfTheOpDecides) {
  EXPECT_EQ(halfPrecisionOf(mm(DType::kFloat32, DType::kFloat32)), DType::kUnknown);
  EXPECT_EQ(halfPrecisionOf(mm(DType::kBFloat16, DType::kBFloat16)), DType::kBFloat16);
  // A cast down: float32 in, float16 out.
  EXPECT_EQ(halfPrecisionOf(mm(DType::kFloat32, DType::kFloat16)), DType::kFloat16);
  EXPECT_EQ(computeFeatures(mm(DType::kBFloat16, DType::kFloat32)).precision, DType::kBFloat16);
}

TEST(PrecisionSets, SetForPrefersThePrecisionSetWhereItHasTheFamily) {
  const ModelSet set = withBf16Gemm();
  const ModelSet& bf16 = *set.precision_sets.at(DType::kBFloat16);
  EXPECT_EQ(&set.setFor("gemm", DType::kBFloat16), &bf16);
  EXPECT_EQ(&set.setFor("gemm", DType::kUnknown), &set);
  EXPECT_EQ(&set.setFor("gemm", DType::kFloat16), &set);   // no float16 set
  EXPECT_EQ(&set.setFor("copy", DType::kBFloat16), &set);  // the bf16 set has no copy model
}

TEST(PrecisionSets, EachOpTakesTheModelsOfItsPrecision) {
  const core::Graph g = testing::graphOfOps(
      {mm(DType::kFloat32, DType::kFloat32), mm(DType::kBFloat16, DType::kBFloat16)});
  const Prediction p = predictGraph(g, withBf16Gemm(), PredictOptions{});
  ASSERT_EQ(p.per_op.size(), 2u);
  EXPECT_EQ(p.per_op[0].model, "constant");
  EXPECT_DOUBLE_EQ(p.per_op[0].predicted_us, 7.0);
  EXPECT_EQ(p.per_op[1].model, "constant@bfloat16");
  EXPECT_DOUBLE_EQ(p.per_op[1].predicted_us, 100.0);
  const auto note = std::find_if(p.notes.begin(), p.notes.end(), [](const std::string& n) {
    return n.find("1 ops ran in bfloat16") != std::string::npos;
  });
  ASSERT_NE(note, p.notes.end());
  EXPECT_NE(note->find("1.00x the main set's"), std::string::npos) << *note;
}

TEST(PrecisionSets, OpsThePrecisionSetNeverSawTakeItsAnalyticBase) {
  // aten::bmm is not among the bf16 set's calibrated gemm ops: the
  // precision set's list decides, not the float32 set's (which has none).
  const core::Graph g = testing::graphOfOps(
      {testing::opNode("aten::bmm",
                       {testing::tensor({2, 64, 64}, DType::kBFloat16, 0, "cpu"),
                        testing::tensor({2, 64, 64}, DType::kBFloat16, 0, "cpu")},
                       {testing::tensor({2, 64, 64}, DType::kBFloat16, 0, "cpu")})});
  const Prediction p = predictGraph(g, withBf16Gemm(), PredictOptions{});
  ASSERT_EQ(p.per_op.size(), 1u);
  EXPECT_EQ(p.per_op[0].model, "uncalibrated:constant@bfloat16");
}

// Its residuals were fitted against its own calibration's probes: a bf16
// set measured while the host ran 1.6x slower (its mm probe 3.75 GFLOP/s
// against the float32 set's 5.92) must not be evaluated on the other's.
TEST(PrecisionSets, APrecisionSetPredictsOnItsOwnDevice) {
  ModelSet set = withBf16Gemm();
  auto bf16 = std::make_shared<ModelSet>(*set.precision_sets.at(DType::kBFloat16));
  bf16->device.peak_flops["float32"] /= 2;
  bf16->setModel("gemm", std::make_shared<RooflineModel>());
  set.precision_sets[DType::kBFloat16] = bf16;
  const core::Graph g = testing::graphOfOps({mm(DType::kBFloat16, DType::kBFloat16)});
  const Prediction p = predictGraph(g, set, PredictOptions{});
  ASSERT_EQ(p.per_op.size(), 1u);
  const OpFeatures f = computeFeatures(g.node(3));
  const double own = RooflineModel().predictUs(f, bf16->device);
  EXPECT_GT(own, 1.5 * RooflineModel().predictUs(f, set.device));
  EXPECT_NEAR(p.per_op[0].predicted_us, own, 1e-6 * own);
}

// The bundled host set's bfloat16 set (data/models/host/bfloat16) serves
// the bundled autocast MLP's GEMMs: each one by a bf16 model, all of them
// at a fraction of what the float32 trees (itemsize 2 never seen) say.
TEST(PrecisionSets, TheBundledBf16SetServesTheAutocastCapturesGemms) {
  const ModelSet set = ModelSet::load(testing::sourcePath("data/models/host"));
  ASSERT_EQ(set.precision_sets.count(DType::kBFloat16), 1u);
  ModelSet float32_only = set;
  float32_only.precision_sets.clear();
  const core::Graph g = core::readTrace(testing::sourcePath("data/amp/mlp_bf16.et.json.gz"));
  const Prediction with = predictGraph(g, set, PredictOptions{});
  const Prediction without = predictGraph(g, float32_only, PredictOptions{});
  ASSERT_EQ(with.per_op.size(), without.per_op.size());
  double gemm_with = 0, gemm_without = 0;
  int gemms = 0;
  for (size_t i = 0; i < with.per_op.size(); ++i) {
    if (with.per_op[i].family != "gemm") continue;
    ++gemms;
    EXPECT_NE(with.per_op[i].model.find("@bfloat16"), std::string::npos) << with.per_op[i].model;
    gemm_with += with.per_op[i].predicted_us;
    gemm_without += without.per_op[i].predicted_us;
  }
  EXPECT_EQ(gemms, 11);
  EXPECT_LT(gemm_with, 0.1 * gemm_without);
}

class PrecisionSetFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tracetwin_precision_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(PrecisionSetFiles, SavedInADtypeFolderAndLoadedBack) {
  withBf16Gemm().save(dir_.string());
  EXPECT_TRUE(fs::exists(dir_ / "bfloat16" / "manifest.json"));
  const ModelSet back = ModelSet::load(dir_.string());
  ASSERT_EQ(back.precision_sets.count(DType::kBFloat16), 1u);
  const ModelSet& bf16 = back.setFor("gemm", DType::kBFloat16);
  ASSERT_NE(&bf16, &back);
  ASSERT_NE(bf16.model("gemm"), nullptr);
  EXPECT_DOUBLE_EQ(bf16.model("gemm")->predictUs(OpFeatures{}, bf16.device), 100.0);
  EXPECT_TRUE(bf16.calibrated("gemm", "aten::mm"));
  EXPECT_FALSE(bf16.calibrated("gemm", "aten::bmm"));
}

TEST_F(PrecisionSetFiles, APrecisionSetOfAnotherDeviceIsRefused) {
  withBf16Gemm("H100-SXM5-80GB").save(dir_.string());
  try {
    ModelSet::load(dir_.string());
    FAIL() << "loaded a bfloat16 set calibrated on another device";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bfloat16/manifest.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("host-cpu"), std::string::npos) << e.what();
  }
}

// `predict` reads only the precision sets whose dtypes the trace holds: a
// float32 trace none (the bundled bfloat16 set's trees were a third of it).
TEST_F(PrecisionSetFiles, OnlyTheNamedPrecisionSetsAreRead) {
  withBf16Gemm().save(dir_.string());
  const std::set<DType> none, bf16 = {DType::kBFloat16};
  EXPECT_EQ(ModelSet::load(dir_.string(), "", &none).precision_sets.size(), 0u);
  EXPECT_EQ(ModelSet::load(dir_.string(), "", &bf16).precision_sets.count(DType::kBFloat16), 1u);
  EXPECT_EQ(ModelSet::load(dir_.string()).precision_sets.count(DType::kBFloat16), 1u);
}

TEST(PrecisionSets, AGraphNeedsTheSetsOfTheHalfDtypesItsTensorsHold) {
  EXPECT_TRUE(
      halfPrecisionsIn(testing::graphOfOps({mm(DType::kFloat32, DType::kFloat32)})).empty());
  EXPECT_EQ(halfPrecisionsIn(testing::graphOfOps(
                {mm(DType::kFloat32, DType::kFloat32), mm(DType::kFloat32, DType::kFloat16)})),
            std::set<DType>{DType::kFloat16});
  EXPECT_EQ(halfPrecisionsIn(core::readTrace(testing::sourcePath("data/amp/mlp_bf16.et.json.gz"))),
            std::set<DType>{DType::kBFloat16});
  EXPECT_TRUE(
      halfPrecisionsIn(core::readTrace(testing::sourcePath("data/mlp.et.json.gz"))).empty());
}

}  // namespace
}  // namespace tracetwin::predictors
