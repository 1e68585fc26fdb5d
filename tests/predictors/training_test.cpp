// Fitting on synthetic measurements drawn from known formulas with 5%
// log-normal noise: hold-out GMAE must approach the noise floor. With
// sigma = 0.05 the GMAE of noise alone is 0.05 * exp(E ln|z|) ~= 0.027.
#include "predictors/models/training.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "predictors/comm/comm_model.h"
#include "predictors/host/reuse_distance.h"
#include "predictors/kernels/xgb_model.h"
#include "tests/support/graphs.h"

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;

constexpr double kNoiseSigma = 0.05;

DeviceSpec testGpu() {
  DeviceSpec d;
  d.name = "synthetic-gpu";
  d.peak_flops = {{"float32", 60e12}, {"bfloat16", 900e12}, {"float16", 900e12}};
  d.memory_bandwidth = 3000e9;
  d.caches = {{"L2", 50LL << 20, 9000e9}};
  d.compute_units = 132;
  d.clock_hz = 1.98e9;
  d.links = {{"nvlink", 450e9, 2e-6}};
  return d;
}

class Synth {
 public:
  explicit Synth(uint64_t seed) : rng_(seed) {}
  double logUniform(double lo, double hi) {
    return std::exp(std::uniform_real_distribution<double>(std::log(lo), std::log(hi))(rng_));
  }
  int64_t pow2(int lo, int hi) {
    return int64_t{1} << std::uniform_int_distribution<int>(lo, hi)(rng_);
  }
  double noisy(double t) {
    return t * std::exp(std::normal_distribution<double>(0, kNoiseSigma)(rng_));
  }

 private:
  std::mt19937_64 rng_;
};

// GEMM "hardware": 128x128 output tiles scheduled in waves over 132 SMs
// (wave quantisation), which a plain roofline cannot express but the learned
// correction can.
std::vector<MeasuredOp> gemmSamples(int n, Synth& s) {
  std::vector<MeasuredOp> out;
  for (int i = 0; i < n; ++i) {
    int64_t m = s.pow2(5, 13), nn = s.pow2(5, 13), k = s.pow2(5, 13);
    double tiles = std::ceil(m / 128.0) * std::ceil(nn / 128.0);
    double waves = std::ceil(tiles / 132);
    double compute = waves * 2.0 * 128 * 128 * k / (900e12 / 132 * 0.85);
    double bytes = (m * k + k * nn + m * nn) * 2.0;
    double t = 4 + std::max(compute, bytes / (3000e9 * 0.9)) * 1e6;
    out.push_back(
        {opNode("aten::mm",
                {tensor({m, k}, core::DType::kBFloat16), tensor({k, nn}, core::DType::kBFloat16)},
                {tensor({m, nn}, core::DType::kBFloat16)}),
         s.noisy(t),
         "synthetic-gpu",
         {}});
  }
  return out;
}

std::vector<MeasuredOp> convSamples(int n, Synth& s) {
  std::vector<MeasuredOp> out;
  const std::vector<std::string> names = {"input",      "weight",         "bias",
                                          "stride",     "padding",        "dilation",
                                          "transposed", "output_padding", "groups"};
  for (int i = 0; i < n; ++i) {
    int64_t b = s.pow2(0, 6), c = s.pow2(3, 9), hw = s.pow2(3, 7), k = s.pow2(3, 9);
    int64_t r = (i % 3 == 0) ? 1 : 3, stride = (i % 4 == 0) ? 2 : 1;
    int64_t out_hw = (hw + 2 * (r / 2) - (r - 1) - 1) / stride + 1;
    double flops = 2.0 * b * k * out_hw * out_hw * c * r * r;
    double bytes = (b * c * hw * hw + k * c * r * r + b * k * out_hw * out_hw) * 4.0;
    double eff = (r == 1 ? 0.5 : 0.7) * (1 - std::exp(-flops / 1e9));
    double t = 6 + std::max(flops / (60e12 * eff), bytes / (3000e9 * 0.8)) * 1e6;
    out.push_back({opNode("aten::convolution",
                          {tensor({b, c, hw, hw}), tensor({k, c, r, r}), tensor({k}),
                           intList({stride, stride}), intList({r / 2, r / 2}), intList({1, 1}),
                           intValue(0), intList({0, 0}), intValue(1)},
                          {tensor({b, k, out_hw, out_hw})}, names),
                   s.noisy(t),
                   "synthetic-gpu",
                   {}});
  }
  return out;
}

std::vector<MeasuredOp> embeddingSamples(int n, Synth& s) {
  std::vector<MeasuredOp> out;
  for (int i = 0; i < n; ++i) {
    int64_t rows = s.pow2(10, 24), dim = s.pow2(4, 8), batch = s.pow2(8, 14), pool = s.pow2(0, 6);
    double gathered = static_cast<double>(batch) * pool * dim * 4;
    double table = static_cast<double>(rows) * dim * 4;
    double hit = std::min(1.0, (50.0 * (1 << 20)) / table);
    double t =
        5 + gathered * (hit / 9000e9 + (1 - hit) / 1500e9) * 1e6 + batch * dim * 4 / 3000e9 * 1e6;
    out.push_back({opNode("aten::embedding_bag",
                          {tensor({rows, dim}), tensor({batch * pool}, core::DType::kInt64),
                           tensor({batch + 1}, core::DType::kInt64)},
                          {tensor({batch, dim})}),
                   s.noisy(t),
                   "synthetic-gpu",
                   {}});
  }
  return out;
}

// Memory-bound ops: achieved bandwidth ramps from 200 GB/s (small) to
// 2.7 TB/s (large) and `exp` costs 1.5x `add`.
std::vector<MeasuredOp> elementwiseSamples(int n, Synth& s) {
  std::vector<MeasuredOp> out;
  for (int i = 0; i < n; ++i) {
    int64_t numel = static_cast<int64_t>(s.logUniform(1e3, 1e9));
    bool is_exp = i % 2 == 0;
    double bytes = numel * 4.0 * (is_exp ? 2 : 3);
    double bw = 200e9 + 2500e9 * bytes / (bytes + 32e6);
    double t = 3 + (is_exp ? 1.5 : 1.0) * bytes / bw * 1e6;
    std::vector<core::Value> in = {tensor({numel})};
    if (!is_exp) in.push_back(tensor({numel}));
    out.push_back({opNode(is_exp ? "aten::exp" : "aten::add", in, {tensor({numel})}),
                   s.noisy(t),
                   "synthetic-gpu",
                   {}});
  }
  return out;
}

std::vector<MeasuredOp> commSamples(int n, Synth& s) {
  std::vector<MeasuredOp> out;
  for (int i = 0; i < n; ++i) {
    int64_t p = s.pow2(1, 3);
    double bytes = s.logUniform(1e3, 1e9);
    const char* name = i % 2 ? "all_reduce" : "all_gather";
    AlphaBetaTerms terms = alphaBetaTerms(name, p);
    double t = (terms.latency_steps * 8e-6 + terms.byte_factor * bytes / 200e9) * 1e6;
    core::Node node = opNode("record_param_comms", {}, {});
    node.category = core::NodeCategory::kCommunication;
    core::CommAttributes attrs;
    attrs.collective_name = name;
    attrs.dtype = "Float";
    attrs.in_msg_nelems = static_cast<int64_t>(bytes / 4);
    attrs.pg_size = p;
    node.comm = attrs;
    out.push_back({node, s.noisy(t), "synthetic-gpu", {}});
  }
  return out;
}

const FamilyFit& familyOf(const FitReport& r, const std::string& family) {
  for (const FamilyFit& f : r.families) {
    if (f.family == family) return f;
  }
  throw std::runtime_error("family not fitted: " + family);
}

struct Case {
  const char* family;
  std::vector<MeasuredOp> (*make)(int, Synth&);
  const char* kind;
  double max_gmae;
};

class FamilyFitTest : public ::testing::TestWithParam<Case> {};

TEST_P(FamilyFitTest, HoldoutErrorNearNoiseFloor) {
  const Case& c = GetParam();
  Synth s(7);
  std::vector<MeasuredOp> samples = c.make(600, s);
  ModelSet set;
  FitReport report = fitModels(samples, testGpu(), FitOptions{}, &set);
  const FamilyFit& fit = familyOf(report, c.family);
  EXPECT_EQ(fit.model_kind, c.kind);
  EXPECT_NEAR(static_cast<double>(fit.n_holdout) / 600, 0.2, 0.05);
  EXPECT_EQ(fit.n_train + fit.n_holdout, 600);
  EXPECT_LT(fit.holdout_gmae, c.max_gmae) << "analytic alone: " << fit.analytic_gmae;
  EXPECT_GT(fit.holdout_gmae, 0.005);  // noise cannot be fitted away
  RecordProperty("holdout_gmae", std::to_string(fit.holdout_gmae));
  std::printf(
      "[ gmae     ] %s: %s hold-out GMAE %.4f (analytic %.4f), n_train %lld, n_holdout %lld\n",
      c.family, fit.model_kind.c_str(), fit.holdout_gmae, fit.analytic_gmae,
      static_cast<long long>(fit.n_train), static_cast<long long>(fit.n_holdout));
  ASSERT_NE(set.model(c.family), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Families, FamilyFitTest,
                         ::testing::Values(Case{"gemm", gemmSamples, "xgboost", 0.06},
                                           Case{"conv", convSamples, "xgboost", 0.07},
                                           Case{"embedding_bag", embeddingSamples, "xgboost", 0.06},
                                           Case{"elementwise", elementwiseSamples,
                                                "bandwidth_curve", 0.08},
                                           Case{"comm", commSamples, "alpha_beta", 0.05}),
                         [](const auto& info) { return std::string(info.param.family); });

TEST(Training, LearnedCorrectionBeatsPlainRooflineOnGemm) {
  Synth s(11);
  ModelSet set;
  FitReport r = fitModels(gemmSamples(600, s), testGpu(), FitOptions{}, &set);
  const FamilyFit& fit = familyOf(r, "gemm");
  EXPECT_LT(fit.holdout_gmae, 0.7 * fit.analytic_gmae);
}

// Softmax whose cost per byte depends on the length of the reduced dim
// (short rows vectorise badly: 3x at 8 classes, 1x from 256 on), which the
// bytes-only curve cannot see; the shape residual can.
std::vector<MeasuredOp> softmaxSamples(int n, Synth& s) {
  std::vector<MeasuredOp> out;
  for (int i = 0; i < n; ++i) {
    const int64_t len = s.pow2(3, 12), rows = s.pow2(0, 14);
    const double bytes = 2.0 * rows * len * 4;
    const double slow = 1 + 2 * std::max(0.0, 1 - std::log2(len / 8.0) / 5);
    const double t = 2 + slow * bytes / 20e9 * 1e6;
    out.push_back({opNode("aten::_softmax", {tensor({rows, len}), intValue(-1), intValue(0)},
                          {tensor({rows, len})}, {"self", "dim", "half_to_float"}),
                   s.noisy(t),
                   "synthetic-gpu",
                   {}});
  }
  return out;
}

TEST(Training, ShapeResidualLearnsTheReducedDimOfSoftmax) {
  Synth s(5);
  ModelSet set;
  const FitReport r = fitModels(softmaxSamples(500, s), testGpu(), FitOptions{}, &set);
  const FamilyFit& fit = familyOf(r, "softmax");
  EXPECT_EQ(fit.model_kind, "xgboost");
  EXPECT_LT(fit.holdout_gmae, 0.5 * fit.analytic_gmae) << fit.holdout_gmae;
}

// Small embedding lookups cost more interleaved with other ops than among
// copies of themselves (their code goes cold: 1.31x median over 192 pairs of a
// CPU calibration). The analytic cache model has one fixed cost; the residual
// must learn the context from its own column (model_set_test: it is saved).
TEST(Training, ResidualSeesWhetherAnOpRanAmongCopiesOfItself) {
  Synth s(5);
  std::vector<MeasuredOp> samples = embeddingSamples(600, s);
  for (size_t i = 0; i < samples.size(); ++i) {
    samples[i].repeated = i % 2 == 0;
    if (!samples[i].repeated) samples[i].measured_us *= 1.5;
  }
  ModelSet set;
  const FitReport r = fitModels(samples, testGpu(), FitOptions{}, &set);
  EXPECT_EQ(familyOf(r, "embedding_bag").model_kind, "xgboost");
  EXPECT_LT(familyOf(r, "embedding_bag").holdout_gmae, 0.06);
  OpFeatures f = computeFeatures(samples[1].node);
  f.repeated = true;
  const double alone = set.model("embedding_bag")->predictUs(f, set.device);
  f.repeated = false;
  const double interleaved = set.model("embedding_bag")->predictUs(f, set.device);
  EXPECT_NEAR(interleaved / alone, 1.5, 0.15);
}

// Calibration interleaves small points only: past the largest one an op
// measured among other ops, it is predicted as it was measured there (among
// copies of itself), not with the small points' context penalty.
TEST(Training, BeyondItsInterleavedReachAnOpIsPredictedAsMeasured) {
  Synth s(5);
  std::vector<MeasuredOp> samples = embeddingSamples(600, s);
  std::vector<double> sizes;
  for (const MeasuredOp& m : samples) sizes.push_back(m.measured_us);
  std::sort(sizes.begin(), sizes.end());
  const double small = sizes[sizes.size() / 2];
  std::vector<MeasuredOp> kept;
  for (size_t i = 0; i < samples.size(); ++i) {
    MeasuredOp m = samples[i];
    m.repeated = i % 2 == 0 || m.measured_us > small;  // the big half only among copies
    if (!m.repeated) m.measured_us *= 1.5;
    kept.push_back(m);
  }
  ModelSet set;
  fitModels(kept, testGpu(), FitOptions{}, &set);
  const KernelModel& model = *set.model("embedding_bag");
  auto interleavedOverAlone = [&](const MeasuredOp& m) {
    OpFeatures f = computeFeatures(m.node);
    f.repeated = true;
    const double alone = model.predictUs(f, set.device);
    f.repeated = false;
    return model.predictUs(f, set.device) / alone;
  };
  const auto biggest = std::max_element(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.measured_us < b.measured_us;
  });
  const auto smallest =
      std::min_element(kept.begin(), kept.end(),
                       [](const auto& a, const auto& b) { return a.measured_us < b.measured_us; });
  EXPECT_DOUBLE_EQ(interleavedOverAlone(*biggest), 1.0);
  EXPECT_NEAR(interleavedOverAlone(*smallest), 1.5, 0.2);
  // Saved and loaded, the reach holds.
  const nlohmann::json j = model.save(::testing::TempDir(), "reach");
  ASSERT_TRUE(j.contains("interleaved_reach_us"));
  EXPECT_TRUE(j["interleaved_reach_us"].contains("aten::embedding_bag"));
}

// Calibration's spaced units measure memory-bound ops long after their
// inputs' last touch: the trees take the reuse distance as a column, the
// analytic base is fitted on the cache-hot samples only, and without spaced
// samples the column stays out (models_test: the column is saved).
TEST(Training, SpacedSamplesGiveTheTreesAReuseColumn) {
  Synth s(8);
  const std::vector<MeasuredOp> hot = elementwiseSamples(400, s);
  std::vector<MeasuredOp> samples = hot;
  for (size_t i = 0; i < hot.size(); i += 2) {
    MeasuredOp far = hot[i];
    far.spaced = true;
    far.reuse_bytes = 64.0 * (1 << 20);
    far.measured_us *= 2.0;
    samples.push_back(far);
  }
  ModelSet with, without;
  const FitReport report = fitModels(samples, testGpu(), FitOptions{}, &with);
  const FitReport plain_report = fitModels(hot, testGpu(), FitOptions{}, &without);
  // The hold-out of the grid points is the one without spaced samples; the
  // spaced ones are scored apart.
  const FamilyFit& fit = familyOf(report, "elementwise");
  EXPECT_EQ(fit.n_holdout, familyOf(plain_report, "elementwise").n_holdout);
  EXPECT_GT(fit.n_spaced_holdout, 0);
  EXPECT_EQ(fit.n_train + fit.n_holdout + fit.n_spaced_holdout,
            static_cast<int64_t>(samples.size()));
  EXPECT_LT(fit.spaced_holdout_gmae, 0.15);
  const auto* learned = dynamic_cast<const XgbResidualModel*>(with.model("elementwise"));
  ASSERT_NE(learned, nullptr);
  EXPECT_TRUE(learned->readsReuse());
  const auto* plain = dynamic_cast<const XgbResidualModel*>(without.model("elementwise"));
  ASSERT_NE(plain, nullptr);
  EXPECT_FALSE(plain->readsReuse());
  OpFeatures f = computeFeatures(hot[2].node);
  f.reuse_bytes = aloneReuseBytes(hot[2].node, 0);
  const double near = learned->predictUs(f, with.device);
  f.reuse_bytes = 64.0 * (1 << 20);
  const double far = learned->predictUs(f, with.device);
  EXPECT_NEAR(far / near, 2.0, 0.3);
  // The base saw the same cache-hot samples either way.
  EXPECT_DOUBLE_EQ(learned->base().predictUs(f, with.device),
                   plain->base().predictUs(f, without.device));
}

TEST(Training, AlphaBetaRecoversParameters) {
  Synth s(3);
  ModelSet set;
  fitModels(commSamples(400, s), testGpu(), FitOptions{}, &set);
  const auto* m = dynamic_cast<const AlphaBetaModel*>(set.model("comm"));
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(m->per_collective.count("all_reduce"));
  EXPECT_NEAR(m->per_collective.at("all_reduce").alpha_s, 8e-6, 0.8e-6);
  EXPECT_NEAR(1.0 / m->per_collective.at("all_reduce").beta_s_per_byte, 200e9, 10e9);
}

TEST(Training, SplitIsDeterministicAndBadSamplesAreDropped) {
  Synth s1(5), s2(5);
  auto a = gemmSamples(100, s1);
  auto b = gemmSamples(100, s2);
  b.push_back(a[0]);
  b.back().measured_us = -1;
  FitOptions opts;
  opts.use_xgboost = false;
  ModelSet m1, m2;
  FitReport r1 = fitModels(a, testGpu(), opts, &m1);
  FitReport r2 = fitModels(b, testGpu(), opts, &m2);
  EXPECT_EQ(familyOf(r1, "gemm").n_holdout, familyOf(r2, "gemm").n_holdout);
  EXPECT_DOUBLE_EQ(familyOf(r1, "gemm").holdout_gmae, familyOf(r2, "gemm").holdout_gmae);
  ASSERT_FALSE(r2.notes.empty());
  EXPECT_NE(r2.notes[0].find("dropped 1"), std::string::npos);
  EXPECT_EQ(familyOf(r1, "gemm").model_kind, "roofline");
}

// One family's rows replaced in the middle of a dataset: every other
// family keeps its split, its model and its score.
TEST(Training, AFamilysRowsLeaveTheOtherFamiliesSplitAlone) {
  Synth s1(7), s2(7), s3(11);
  std::vector<MeasuredOp> before = elementwiseSamples(60, s1);
  const std::vector<MeasuredOp> gemm = gemmSamples(80, s1);
  before.insert(before.begin(), gemm.begin(), gemm.end());
  std::vector<MeasuredOp> after = elementwiseSamples(60, s2);
  const std::vector<MeasuredOp> fewer_gemm = gemmSamples(45, s3);  // other rows, fewer
  after.insert(after.begin(), fewer_gemm.begin(), fewer_gemm.end());
  FitOptions opts;
  opts.use_xgboost = false;
  ModelSet m1, m2;
  const FitReport r1 = fitModels(before, testGpu(), opts, &m1);
  const FitReport r2 = fitModels(after, testGpu(), opts, &m2);
  const FamilyFit& e1 = familyOf(r1, "elementwise");
  const FamilyFit& e2 = familyOf(r2, "elementwise");
  EXPECT_EQ(e1.n_train, e2.n_train);
  EXPECT_EQ(e1.n_holdout, e2.n_holdout);
  EXPECT_GT(e1.n_holdout, 0);
  EXPECT_DOUBLE_EQ(e1.holdout_gmae, e2.holdout_gmae);
  EXPECT_NE(familyOf(r1, "gemm").n_holdout + familyOf(r1, "gemm").n_train,
            familyOf(r2, "gemm").n_holdout + familyOf(r2, "gemm").n_train);
}

TEST(Training, GmaeIsGeometricMeanOfRelativeErrors) {
  // errors 0.1 and 0.4: geometric mean 0.2
  EXPECT_NEAR(gmae({110, 60}, {100, 100}), 0.2, 1e-12);
  // An exact hit on a 0.5 us op is one clock tick off, not 1e-6: 2%, so the
  // mean of it and a 8% miss is 4%.
  EXPECT_NEAR(gmae({0.5, 0.54}, {0.5, 0.5}), 0.04, 1e-12);
}

}  // namespace
}  // namespace tracetwin::predictors

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;

// Two kernels at one op name: add_ with a float operand (0.6 us fixed) and
// with a 0-dim long operand (2.0 us, the type-promoting path), same
// bandwidth. One family intercept cannot fit both; per-variant ones can.
TEST(Training, BandwidthCurveFitsOneFixedCostPerOpVariant) {
  std::vector<MeasuredOp> samples;
  for (int64_t numel = 1; numel <= (int64_t{1} << 22); numel *= 4) {
    for (bool promoted : {false, true}) {
      core::Value self = tensor({numel}, core::DType::kFloat32, 0, "cpu");
      core::Value other = promoted ? tensor({}, core::DType::kInt64, 0, "cpu")
                                   : tensor({numel}, core::DType::kFloat32, 0, "cpu");
      MeasuredOp m;
      m.node = opNode("aten::add_", {self, other, intValue(1)}, {self});
      const double bytes = static_cast<double>(computeFeatures(m.node).bytes);
      m.measured_us = (promoted ? 2.0 : 0.6) + bytes / 10e9 * 1e6;
      samples.push_back(m);
    }
  }
  DeviceSpec cpu = testGpu();
  cpu.kind = DeviceKind::kCpu;
  FitOptions opts;
  opts.holdout_fraction = 0;
  ModelSet set;
  fitModels(samples, cpu, opts, &set);
  const KernelModel* m = set.model("elementwise");
  ASSERT_NE(m, nullptr);
  for (const MeasuredOp& s : samples) {
    const OpFeatures f = computeFeatures(s.node);
    EXPECT_NEAR(m->predictUs(f, cpu), s.measured_us, 0.05 * s.measured_us) << f.variant;
  }
}

TEST(Features, VariantMarksZeroDimMixedAndStridedOperands) {
  auto key = [](const core::Node& n) { return variantKey(computeFeatures(n)); };
  core::Value x = tensor({4, 8}, core::DType::kFloat32, 0, "cpu");
  EXPECT_EQ(key(opNode("aten::add_", {x, tensor({4, 8}), intValue(1)}, {x})), "aten::add_");
  EXPECT_EQ(key(opNode("aten::add_", {x, tensor({}, core::DType::kInt64), intValue(1)}, {x})),
            "aten::add_#0d#mix");
  core::Value t = tensor({8, 4});
  t.tensor->strides = {1, 8};  // a transpose
  EXPECT_EQ(key(opNode("aten::relu", {t}, {tensor({8, 4})})), "aten::relu#nc");
  core::Value drop_p = intValue(0);
  drop_p.kind = core::ValueKind::kDouble;
  drop_p.double_value = 0.0;
  core::Value train;
  train.kind = core::ValueKind::kBool;
  train.bool_value = true;
  EXPECT_EQ(key(opNode("aten::dropout", {t, drop_p, train}, {tensor({8, 4})})),
            "aten::dropout#off#nc");
  // Families without a memory-bound model keep the op name.
  EXPECT_EQ(key(opNode("aten::mm", {x, tensor({8, 2})}, {tensor({4, 2})})), "aten::mm");
}

}  // namespace
}  // namespace tracetwin::predictors

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;

// One sample of each of ten view ops, each with its own time: the view
// family's per-op constants fit a held-out op only when the hold-out joins
// the final fit.
std::vector<MeasuredOp> viewSamples() {
  const char* ops[] = {"aten::view",      "aten::reshape", "aten::t",       "aten::transpose",
                       "aten::unsqueeze", "aten::expand",  "aten::squeeze", "aten::flatten",
                       "aten::select",    "aten::slice"};
  std::vector<MeasuredOp> samples;
  double us = 1.0;
  for (const char* op : ops) {
    core::Value a = tensor({64, 64}, core::DType::kFloat32, 0, "cpu");
    MeasuredOp m;
    m.node = opNode(op, {a}, {tensor({64, 64}, core::DType::kFloat32, 0, "cpu")});
    m.measured_us = us;
    us *= 1.5;
    samples.push_back(m);
  }
  return samples;
}

TEST(Training, KeptModelsAreFittedAgainOnTheHoldoutToo) {
  DeviceSpec cpu = testGpu();
  cpu.kind = DeviceKind::kCpu;
  FitOptions opts;
  opts.use_xgboost = false;
  opts.holdout_fraction = 0.5;
  const std::vector<MeasuredOp> samples = viewSamples();
  auto worstMiss = [&](const ModelSet& set) {
    double worst = 0;
    for (const MeasuredOp& s : samples) {
      const double p = set.model("view")->predictUs(computeFeatures(s.node), cpu);
      worst = std::max(worst, std::abs(p - s.measured_us) / s.measured_us);
    }
    return worst;
  };
  ModelSet train_only, every;
  opts.refit_on_all = false;
  const FitReport r1 = fitModels(samples, cpu, opts, &train_only);
  opts.refit_on_all = true;
  const FitReport r2 = fitModels(samples, cpu, opts, &every);
  ASSERT_GT(familyOf(r1, "view").n_holdout, 0);
  // The report scores the model fitted without the hold-out either way.
  EXPECT_DOUBLE_EQ(familyOf(r1, "view").holdout_gmae, familyOf(r2, "view").holdout_gmae);
  // Without the hold-out its ops take the family's median (times 1.5x apart).
  EXPECT_GT(worstMiss(train_only), 0.3);
  EXPECT_LT(worstMiss(every), 1e-9);
}

TEST(Training, ModelSetListsTheOpsEachFamilyWasFittedOn) {
  DeviceSpec cpu = testGpu();
  cpu.kind = DeviceKind::kCpu;
  FitOptions opts;
  opts.use_xgboost = false;
  ModelSet set;
  opts.holdout_fraction = 0.5;  // ops seen only in the hold-out count too
  fitModels(viewSamples(), cpu, opts, &set);
  ASSERT_EQ(set.calibrated_ops.count("view"), 1u);
  EXPECT_EQ(set.calibrated_ops.at("view").size(), 10u);
  EXPECT_TRUE(set.calibrated("view", "aten::slice"));
  EXPECT_FALSE(set.calibrated("view", "aten::narrow"));
  // A family the fit never saw has no list: nothing to tell.
  EXPECT_TRUE(set.calibrated("gemm", "aten::mm"));
}

}  // namespace
}  // namespace tracetwin::predictors
