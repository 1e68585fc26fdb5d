#include "predictors/comm/comm_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "core/statistics.h"
#include "core/units.h"

namespace tracetwin::predictors {
namespace {

using core::kGiga;

// A second regime must cut the squared relative error by this share.
constexpr double kSplitGain = 0.2;
// Sizes within 1% of each other are one nominal size (see fitCollective).
constexpr double kSameSize = 0.01;

struct Row {
  double latency_steps, byte_terms, seconds;  // seconds = alpha * latency_steps + beta * byte_terms
};

// Least squares on relative error: minimise sum((a*x1 + b*x2) / t - 1)^2
// with a, b >= 0. Returns the squared-error sum.
double fitRows(const std::vector<Row>& rows, AlphaBetaModel::Params* out) {
  double s11 = 0, s12 = 0, s22 = 0, s1 = 0, s2 = 0;
  for (const Row& r : rows) {
    const double x1 = r.latency_steps / r.seconds, x2 = r.byte_terms / r.seconds;
    s11 += x1 * x1;
    s12 += x1 * x2;
    s22 += x2 * x2;
    s1 += x1;
    s2 += x2;
  }
  double a = 0, b = 0;
  const double det = s11 * s22 - s12 * s12;
  if (det > 1e-12 * s11 * s22) {
    a = (s1 * s22 - s2 * s12) / det;
    b = (s2 * s11 - s1 * s12) / det;
  }
  // Outside a >= 0, b >= 0 (or singular): the best with one of them zero.
  if (!(a >= 0 && b >= 0)) {
    const double a_only = s11 > 0 ? s1 / s11 : 0, b_only = s22 > 0 ? s2 / s22 : 0;
    auto error = [&](double aa, double bb) {
      double e = 0;
      for (const Row& r : rows) {
        const double d = (aa * r.latency_steps + bb * r.byte_terms) / r.seconds - 1;
        e += d * d;
      }
      return e;
    };
    if (error(a_only, 0) <= error(0, b_only)) {
      a = a_only;
      b = 0;
    } else {
      a = 0;
      b = b_only;
    }
  }
  out->alpha_s = a;
  out->beta_s_per_byte = b;
  double e = 0;
  for (const Row& r : rows) {
    const double d = (a * r.latency_steps + b * r.byte_terms) / r.seconds - 1;
    e += d * d;
  }
  return e;
}

using core::median;

Row rowOf(const CommPoint& p) {
  const AlphaBetaTerms t = alphaBetaTerms(p.collective, p.group_size);
  return {t.latency_steps, t.byte_factor * p.bytes, p.seconds};
}

CommCollectiveFit fitCollective(const std::string& name, const std::vector<CommPoint>& points) {
  CommCollectiveFit out;
  out.collective = name;
  out.points = int64_t(points.size());
  std::vector<double> sizes;
  for (const CommPoint& p : points) sizes.push_back(p.bytes);
  std::sort(sizes.begin(), sizes.end());
  // One nominal size per class: the sweep rounds a size to a multiple of the
  // group size (16 MiB is 16,777,212 B on 3 ranks), and counting those as
  // sizes of their own let a "regime" rest on one nominal size (Gloo's
  // broadcast above 4 MiB fitted alpha 5.9 ms from 16 MiB alone). A class
  // holds sizes within 1% of its smallest; its largest is the boundary.
  std::vector<double> classes;
  for (double n : sizes) {
    if (!classes.empty() && n <= classes.back() * (1 + kSameSize)) {
      continue;
    }
    classes.push_back(n);
  }
  for (double& c : classes) {
    c = *std::prev(std::upper_bound(sizes.begin(), sizes.end(), c * (1 + kSameSize)));
  }
  sizes = std::move(classes);
  std::vector<Row> all;
  for (const CommPoint& p : points) all.push_back(rowOf(p));
  AlphaBetaModel::Params one;
  const double one_error = fitRows(all, &one);
  out.regimes = {{AlphaBetaModel::kAnySize, one}};
  double best = one_error;
  // small: sizes[0..k], large: sizes[k+1..]; at least two sizes each side.
  for (size_t k = 1; k + 3 <= sizes.size(); ++k) {
    std::vector<Row> small, large;
    for (const CommPoint& p : points) (p.bytes <= sizes[k] ? small : large).push_back(rowOf(p));
    AlphaBetaModel::Params ps, pl;
    const double e = fitRows(small, &ps) + fitRows(large, &pl);
    if (e < best && e <= (1 - kSplitGain) * one_error) {
      best = e;
      out.regimes = {{sizes[k], ps}, {AlphaBetaModel::kAnySize, pl}};
    }
  }
  return out;
}

}  // namespace

CommFit fitCommModels(const std::vector<CommSample>& samples) {
  CommFit fit;
  std::map<std::tuple<std::string, int64_t, double>, std::vector<double>> pooled;
  for (const CommSample& s : samples) {
    if (s.group_size <= 1 || s.seconds <= 0 || s.bytes < 0) continue;
    pooled[{canonicalCollective(s.collective), s.group_size, s.bytes}].push_back(s.seconds);
  }
  std::map<std::string, std::vector<CommPoint>> by_collective;
  for (const auto& [key, secs] : pooled) {
    CommPoint p;
    std::tie(p.collective, p.group_size, p.bytes) = key;
    p.seconds = median(secs);
    p.samples = int64_t(secs.size());
    p.algbw_gbps = p.bytes / p.seconds / kGiga;
    p.busbw_gbps = p.algbw_gbps * busBandwidthFactor(p.collective, p.group_size);
    by_collective[p.collective].push_back(p);
  }
  for (auto& [name, points] : by_collective) {
    if (points.size() < 2) {
      fit.notes.push_back(fmt::format("{}: {} point(s); two or more are needed to fit alpha and "
                                      "beta",
                                      name, points.size()));
      for (const CommPoint& p : points) fit.points.push_back(p);
      continue;
    }
    CommCollectiveFit c = fitCollective(name, points);
    AlphaBetaModel model;
    model.regimes[name] = c.regimes;
    double abs_error = 0;
    for (CommPoint& p : points) {
      const AlphaBetaModel::Params& q = model.paramsFor(name, p.bytes);
      const AlphaBetaTerms t = alphaBetaTerms(name, p.group_size);
      p.predicted_s = t.latency_steps * q.alpha_s + t.byte_factor * p.bytes * q.beta_s_per_byte;
      abs_error += std::abs(p.predicted_s / p.seconds - 1);
      fit.points.push_back(p);
    }
    c.mean_abs_error = abs_error / double(points.size());
    fit.collectives.push_back(std::move(c));
  }
  return fit;
}

void applyCommFit(const CommFit& fit, AlphaBetaModel* model) {
  for (const CommCollectiveFit& c : fit.collectives) {
    if (c.regimes.empty()) continue;
    model->regimes[c.collective] = c.regimes;
    model->per_collective[c.collective] = c.regimes.back().params;
  }
}

}  // namespace tracetwin::predictors
