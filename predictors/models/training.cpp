// fitModels: features per sample, a deterministic 80/20 split, one fitter per
// family from a name-keyed table, and hold-out accuracy for the report.
#include "predictors/models/training.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

#include "core/statistics.h"
#include "predictors/models/analytic_fit.h"
#include "predictors/kernels/analytic_models.h"
#include "predictors/kernels/conv_path_model.h"
#include "predictors/host/reuse_distance.h"
#include "predictors/kernels/xgb_model.h"

namespace tracetwin::predictors {
namespace {

using AnalyticFitter = std::function<std::shared_ptr<const KernelModel>(
    const std::vector<const Sample*>&, const DeviceSpec&)>;

struct FamilyFitter {
  AnalyticFitter analytic;
  bool learned;  // gets an XGBoost correction when enough samples exist
};

const std::unordered_map<std::string, FamilyFitter>& fitters() {
  static const std::unordered_map<std::string, FamilyFitter> t = {
      {"gemm", {fitRoofline, true}},
      {"conv", {fitConvPaths, true}},
      {"embedding_bag", {fitCacheModel, true}},
      {"elementwise", {fitBandwidthCurve, true}},  // + XGBoost over shapes
      {"reduction", {fitBandwidthCurve, true}},    // + XGBoost over shapes
      {"norm", {fitBandwidthCurve, true}},         // + XGBoost over rows and row length
      {"softmax", {fitBandwidthCurve, true}},      // + XGBoost over shapes
      {"copy", {fitBandwidthCurve, true}},         // + XGBoost over shapes
      {"triton", {fitBandwidthCurve, false}},
      {"other", {fitBandwidthCurve, false}},
      {"view", {fitConstant, true}},  // + XGBoost over shapes
      {"comm", {fitAlphaBeta, false}},
  };
  return t;
}

// splitmix64: a fixed, platform-independent hash for the hold-out split.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

bool isHoldout(size_t index, const FitOptions& opts) {
  double u = static_cast<double>(mix(opts.seed ^ (index * 0x100000001b3ULL)) >> 11) * 0x1.0p-53;
  return u < opts.holdout_fraction;
}

std::vector<double> predictAll(const KernelModel& m, const std::vector<const Sample*>& s,
                               const DeviceSpec& d) {
  std::vector<const OpFeatures*> feats;
  for (const Sample* p : s) feats.push_back(&p->f);
  std::vector<double> out;
  m.predictBatch(feats, d, &out);
  return out;
}

std::vector<double> times(const std::vector<const Sample*>& s) {
  std::vector<double> out;
  for (const Sample* p : s) out.push_back(p->us);
  return out;
}

double interceptOf(const KernelModel& m) {
  nlohmann::json j = m.save("", "");
  if (j.contains("t0_us")) return j["t0_us"].get<double>();
  if (j.contains("base") && j["base"].contains("t0_us")) return j["base"]["t0_us"].get<double>();
  if (j.contains("default_us")) return j["default_us"].get<double>();
  if (j.contains("pooled") && j["pooled"].contains("t0_us"))  // conv paths: the pooled fit's
    return j["pooled"]["t0_us"].get<double>();
  return 0.0;
}

// Per op, its largest grid point's bytes and the median residual (y) of its
// points from half that size up (SizeEdge).
SizeEdges sizeEdges(const std::vector<const Sample*>& train, const std::vector<float>& y) {
  SizeEdges edges;
  for (const Sample* s : train) {
    if (s->spaced) continue;  // slower than the same point hot, by design
    SizeEdge& e = edges[s->f.op];
    e.max_bytes = std::max(e.max_bytes, s->f.bytes);
  }
  std::unordered_map<std::string, std::vector<double>> top;
  for (size_t i = 0; i < train.size(); ++i) {
    const OpFeatures& f = train[i]->f;
    if (!train[i]->spaced && f.bytes >= edges[f.op].max_bytes / 2) top[f.op].push_back(y[i]);
  }
  for (auto& [op, e] : edges) e.log_ratio = core::median(top[op]);
  return edges;
}

// The samples measured on cache-hot inputs: what an analytic base is fitted
// on (spaced samples only shape the trees).
std::vector<const Sample*> unspaced(const std::vector<const Sample*>& samples) {
  std::vector<const Sample*> out;
  out.reserve(samples.size());
  for (const Sample* s : samples)
    if (!s->spaced) out.push_back(s);
  return out.empty() ? samples : out;
}

bool hasSpacedSamples(const std::vector<const Sample*>& samples, const FitOptions& opts) {
  const auto n =
      std::count_if(samples.begin(), samples.end(), [](const Sample* s) { return s->spaced; });
  return n > 0 && n >= opts.min_spaced_samples;
}

std::shared_ptr<const KernelModel> fitLearned(std::shared_ptr<const KernelModel> base,
                                              const std::string& family,
                                              const std::vector<const Sample*>& train,
                                              const DeviceSpec& d, const FitOptions& opts) {
  // The family's columns, then the context: whether the op ran among copies
  // of itself. Small embedding ops cost a median 1.31x more interleaved with
  // other ops than alone (192 pairs of one calibration), and gemm, conv and
  // embedding_bag have no per-context fixed cost in their analytic model.
  // Where calibration measured ops at other reuse distances, the inputs'
  // distance follows: on the development VM a batch norm backward over
  // 1 MiB tensors took 91 us re-run at once and 263 us after 24 MiB of
  // other traffic, the distance its inputs have in a CNN's step.
  const size_t repeated_column = featureCount(family);
  const bool with_reuse = hasSpacedSamples(train, opts);
  const size_t reuse_column = with_reuse ? repeated_column + 1 : kNoReuseColumn;
  const size_t cols = repeated_column + (with_reuse ? 2 : 1);
  std::vector<float> x, y;
  std::vector<double> base_pred = predictAll(*base, train, d);
  for (size_t i = 0; i < train.size(); ++i) {
    appendBoosterRow(train[i]->f, cols, repeated_column, &x, reuse_column);
    y.push_back(static_cast<float>(std::log(train[i]->us / std::max(base_pred[i], 1e-9))));
  }
  XgbParams p{opts.xgb_rounds, opts.xgb_max_depth, opts.xgb_eta, opts.seed};
  std::shared_ptr<const Booster> booster = Booster::train(x, cols, y, p);
  // Edges for memory-bound families only: a roofline or convolution base
  // scales with FLOPs, along which the trees of those families do better
  // (mlp_big's 4096^3 GEMMs, 60x the largest grid point's bytes: -8% of
  // their replayed time from the trees, -10% held at the edge).
  SizeEdges edges;
  if (dynamic_cast<const BandwidthCurveModel*>(base.get()) != nullptr) edges = sizeEdges(train, y);
  InterleavedReach reach;
  for (size_t i = 0; i < train.size(); ++i) {
    if (train[i]->f.repeated || train[i]->spaced) continue;
    double& r = reach[train[i]->f.op];
    r = std::max(r, base_pred[i]);
  }
  return std::make_shared<XgbResidualModel>(std::move(base), std::move(booster), cols,
                                            repeated_column, std::move(edges), reuse_column,
                                            std::move(reach));
}

// Whether the XGBoost residual beats the analytic model on data it was not
// fitted to: both are fitted on 80% of the training set and scored on the
// rest (the hold-out stays untouched for the report). On small, noisy
// families (view: 105 samples of 1-2 us ops) the trees fit the noise and
// score worse than the per-op constants they correct. Too few samples to
// judge: keep the residual.
bool residualHelps(const std::string& family, const FamilyFitter& fitter,
                   const std::vector<const Sample*>& train, const DeviceSpec& d,
                   const FitOptions& opts, double* analytic_score, double* learned_score) {
  FitOptions inner = opts;
  inner.seed = opts.seed * 0x9e3779b97f4a7c15ULL + 1;
  std::vector<const Sample*> fit, check;
  for (size_t i = 0; i < train.size(); ++i) (isHoldout(i, inner) ? check : fit).push_back(train[i]);
  if (check.size() < 10 || static_cast<int>(fit.size()) < opts.min_samples_for_xgboost) return true;
  std::shared_ptr<const KernelModel> base = fitter.analytic(unspaced(fit), d);
  std::shared_ptr<const KernelModel> learned = fitLearned(base, family, fit, d, opts);
  *analytic_score = gmae(predictAll(*base, check, d), times(check));
  *learned_score = gmae(predictAll(*learned, check, d), times(check));
  return *learned_score < *analytic_score;
}

// Per op name of the hold-out, the GMAE of `predicted`; the worst
// kWorstHoldoutOps, worst first.
std::vector<FamilyFit::OpScore> worstOps(const std::vector<const Sample*>& hold,
                                         const std::vector<double>& predicted) {
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_op;
  for (size_t i = 0; i < hold.size(); ++i) {
    auto& [pred, meas] = by_op[hold[i]->f.op];
    pred.push_back(predicted[i]);
    meas.push_back(hold[i]->us);
  }
  std::vector<FamilyFit::OpScore> scores;
  for (const auto& [op, pm] : by_op)
    scores.push_back({op, gmae(pm.first, pm.second), static_cast<int64_t>(pm.first.size())});
  std::stable_sort(
      scores.begin(), scores.end(),
      [](const FamilyFit::OpScore& a, const FamilyFit::OpScore& b) { return a.gmae > b.gmae; });
  if (scores.size() > kWorstHoldoutOps) scores.resize(kWorstHoldoutOps);
  return scores;
}

}  // namespace

double gmae(const std::vector<double>& predicted, const std::vector<double>& measured) {
  if (predicted.empty() || predicted.size() != measured.size()) return 0.0;
  double log_sum = 0;
  for (size_t i = 0; i < predicted.size(); ++i) {
    // Timings come in clock ticks (10 ns steps on the development VM), so a
    // per-op median model hits a hold-out sample exactly now and then (18 of
    // 110 view rows of one calibration tie with another row of their op). An
    // exact hit counted at the 1e-6 floor pulled the view family's GMAE from
    // ~10% to 0.6%; a miss smaller than one tick counts as one tick.
    const double miss_us = std::max(std::abs(predicted[i] - measured[i]), kTimerTickUs);
    const double err = miss_us / std::max(std::abs(measured[i]), 1e-12);
    log_sum += std::log(std::max(err, 1e-6));
  }
  return std::exp(log_sum / static_cast<double>(predicted.size()));
}

FitReport fitModels(const std::vector<MeasuredOp>& samples, const DeviceSpec& device,
                    const FitOptions& opts, ModelSet* out) {
  FitReport report;
  out->device = device;
  out->torch_version = opts.torch_version;
  std::vector<Sample> all;
  all.reserve(samples.size());
  size_t dropped = 0;
  for (const MeasuredOp& m : samples) {
    if (!std::isfinite(m.measured_us) || m.measured_us <= 0) {
      ++dropped;
      continue;
    }
    all.push_back(
        {computeFeatures(m.node, m.index_reuse.empty() ? nullptr : &m.index_reuse), m.measured_us});
    all.back().f.repeated = m.repeated;
    all.back().f.reuse_bytes =
        m.reuse_bytes >= 0 ? m.reuse_bytes : aloneReuseBytes(m.node, device.privateCacheBytes());
    all.back().spaced = m.spaced;
  }
  if (dropped)
    report.notes.push_back(
        fmt::format("dropped {} samples with non-positive or non-finite time", dropped));
  // The split draws on a sample's index within its family, so one family's
  // rows added, dropped or replaced leave every other family's split, and
  // with it the choice of its model, as it was (by the global index, a
  // dataset whose embedding rows were replaced refitted elementwise as its
  // analytic model and view with a residual, none of their rows changed).
  std::map<std::string, std::pair<std::vector<const Sample*>, std::vector<const Sample*>>> split;
  for (const Sample& sample : all) {
    auto& [train, hold] = split[sample.f.family];
    (isHoldout(train.size() + hold.size(), opts) ? hold : train).push_back(&sample);
  }
  for (auto& [family, sets] : split) {
    auto& [train, hold] = sets;
    if (train.empty()) std::swap(train, hold);  // tiny families: fit on what there is
    const FamilyFitter& fitter = fitters().at(family);
    std::shared_ptr<const KernelModel> analytic = fitter.analytic(unspaced(train), device);
    std::shared_ptr<const KernelModel> chosen = analytic;
    const bool enough = static_cast<int>(train.size()) >= opts.min_samples_for_xgboost;
    bool learn = fitter.learned && opts.use_xgboost && enough;
    if (fitter.learned && opts.use_xgboost && !enough) {
      report.notes.push_back(
          fmt::format("{}: {} training samples, kept the analytic model (XGBoost needs {})", family,
                      train.size(), opts.min_samples_for_xgboost));
    }
    double analytic_score = 0, learned_score = 0;
    if (learn &&
        !residualHelps(family, fitter, train, device, opts, &analytic_score, &learned_score)) {
      learn = false;
      report.notes.push_back(fmt::format(
          "{}: kept the analytic model: on 20% of the training set it scored {:.1f}% GMAE, "
          "with the XGBoost residual {:.1f}%",
          family, 100 * analytic_score, 100 * learned_score));
    }
    if (learn) chosen = fitLearned(analytic, family, train, device, opts);
    std::vector<const Sample*> hot_hold, spaced_hold;
    for (const Sample* s : hold) (s->spaced ? spaced_hold : hot_hold).push_back(s);
    FamilyFit fit;
    fit.family = family;
    fit.model_kind = chosen->kind();
    fit.n_train = static_cast<int64_t>(train.size());
    fit.n_holdout = static_cast<int64_t>(hot_hold.size());
    if (!hot_hold.empty()) {
      const std::vector<double> predicted = predictAll(*chosen, hot_hold, device);
      fit.holdout_gmae = gmae(predicted, times(hot_hold));
      fit.analytic_gmae = gmae(predictAll(*analytic, hot_hold, device), times(hot_hold));
      fit.worst_holdout_ops = worstOps(hot_hold, predicted);
    }
    if (!spaced_hold.empty()) {
      fit.n_spaced_holdout = static_cast<int64_t>(spaced_hold.size());
      fit.spaced_holdout_gmae = gmae(predictAll(*chosen, spaced_hold, device), times(spaced_hold));
    }
    if (opts.refit_on_all && !hold.empty()) {
      std::vector<const Sample*> every = train;
      every.insert(every.end(), hold.begin(), hold.end());
      analytic = fitter.analytic(unspaced(every), device);
      chosen = learn ? fitLearned(analytic, family, every, device, opts) : analytic;
    }
    fit.intercept_us = interceptOf(*analytic);
    out->setModel(family, chosen);
    std::set<std::string>& names = out->calibrated_ops[family];
    names.clear();
    for (const Sample* s : train) names.insert(s->f.op);
    for (const Sample* s : hold) names.insert(s->f.op);
    report.families.push_back(fit);
  }
  if (opts.replay_loop_us > 0) {
    out->overheads.t[static_cast<int>(Overhead::kT1)][kAllOps] = {opts.replay_loop_us, 0.0,
                                                                  static_cast<int64_t>(all.size())};
    out->overheads.sources.push_back("calibration: replay loop cost per op");
  }
  return report;
}

}  // namespace tracetwin::predictors
