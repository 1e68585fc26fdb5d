#include "predictors/analytic_fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>

namespace tracetwin::predictors {
namespace {

constexpr double kUsPerS = 1e6;
constexpr double kMinEff = 1e-3;

double computeUs(const OpFeatures& f, const DeviceSpec& d) {
  return f.flops / d.peakFlops(f.dtype) * kUsPerS;
}
double memoryUs(const OpFeatures& f, const DeviceSpec& d) {
  return f.bytes / d.memory_bandwidth * kUsPerS;
}

}  // namespace

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  double hi = v[mid];
  if (v.size() % 2) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lo + hi);
}

std::vector<double> relativeLeastSquares(const std::vector<std::vector<double>>& rows,
                                         const std::vector<double>& y) {
  if (rows.empty()) return {};
  const Eigen::Index n = static_cast<Eigen::Index>(rows.size());
  const Eigen::Index k = static_cast<Eigen::Index>(rows[0].size());
  Eigen::MatrixXd a(n, k);
  Eigen::VectorXd b(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    double w = 1.0 / std::max(y[static_cast<size_t>(i)], 1e-9);
    for (Eigen::Index j = 0; j < k; ++j)
      a(i, j) = rows[static_cast<size_t>(i)][static_cast<size_t>(j)] * w;
    b(i) = 1.0;  // y * w
  }
  Eigen::VectorXd x = a.colPivHouseholderQr().solve(b);
  return std::vector<double>(x.data(), x.data() + x.size());
}

std::shared_ptr<RooflineModel> fitRoofline(const std::vector<const Sample*>& s,
                                           const DeviceSpec& d) {
  auto m = std::make_shared<RooflineModel>();
  m->t0_us = defaultLaunchUs(d);
  if (s.size() < 3) return m;
  double a = 1.0 / m->compute_eff, b = 1.0 / m->memory_eff;
  // Alternate: assign each sample to the roof that binds under the current
  // parameters, then solve t = t0 + a*compute + b*memory for that split.
  for (int iter = 0; iter < 12; ++iter) {
    std::vector<std::vector<double>> rows;
    std::vector<double> y;
    bool any_c = false, any_m = false;
    for (const Sample* p : s) {
      double c = computeUs(p->f, d), mem = memoryUs(p->f, d);
      bool compute_bound = a * c >= b * mem;
      any_c |= compute_bound;
      any_m |= !compute_bound;
      rows.push_back({1.0, compute_bound ? c : 0.0, compute_bound ? 0.0 : mem});
      y.push_back(p->us);
    }
    // A roof with no samples cannot be fitted: drop its column, keep its value.
    for (auto& r : rows) {
      if (!any_c) r[1] = 0;
      if (!any_m) r[2] = 0;
    }
    std::vector<double> x = relativeLeastSquares(rows, y);
    double t0 = std::max(0.0, x[0]);
    double na = any_c && x[1] > 0 ? x[1] : a;
    double nb = any_m && x[2] > 0 ? x[2] : b;
    bool done = std::abs(na - a) < 1e-6 * a && std::abs(nb - b) < 1e-6 * b;
    a = std::min(na, 1.0 / kMinEff);
    b = std::min(nb, 1.0 / kMinEff);
    m->t0_us = t0;
    if (done) break;
  }
  m->compute_eff = 1.0 / a;
  m->memory_eff = 1.0 / b;
  return m;
}

std::shared_ptr<CacheModel> fitCacheModel(const std::vector<const Sample*>& s,
                                          const DeviceSpec& d) {
  auto m = std::make_shared<CacheModel>();
  m->t0_us = defaultLaunchUs(d);
  if (s.size() < 3) return m;
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (const Sample* p : s) {
    rows.push_back({1.0, CacheModel::memoryTimeUs(p->f, d)});
    y.push_back(p->us);
  }
  std::vector<double> x = relativeLeastSquares(rows, y);
  m->t0_us = std::max(0.0, x[0]);
  if (x[1] > kMinEff) m->eff = 1.0 / x[1];
  return m;
}

std::shared_ptr<BandwidthCurveModel> fitBandwidthCurve(const std::vector<const Sample*>& s,
                                                       const DeviceSpec& d) {
  auto m = BandwidthCurveModel::fromDevice(d);
  if (s.size() < 3) return m;
  // Intercept from t = t0 + bytes * slope; clamped below the fastest sample.
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  double fastest = s[0]->us;
  double lo = 1e300, hi = 0;
  for (const Sample* p : s) {
    rows.push_back({1.0, p->f.bytes});
    y.push_back(p->us);
    fastest = std::min(fastest, p->us);
    double lb = std::log2(std::max(p->f.bytes, 1.0));
    lo = std::min(lo, lb);
    hi = std::max(hi, lb);
  }
  m->t0_us = std::clamp(relativeLeastSquares(rows, y)[0], 0.0, 0.9 * fastest);
  m->op_factor.clear();
  // Alternate between the bandwidth knots (size dependence) and per-op factors
  // (op dependence); three rounds settle both on the sample sets we use.
  for (int round = 0; round < 3; ++round) {
    std::vector<double> knots, bws;
    for (double k = lo; k <= hi + 1e-9; k += 2.0) {
      std::vector<double> bw;
      for (const Sample* p : s) {
        double lb = std::log2(std::max(p->f.bytes, 1.0));
        double body = p->us - m->t0_us;
        if (std::abs(lb - k) > 1.0 || body <= 0 || p->f.bytes <= 0) continue;
        bw.push_back(p->f.bytes * m->factor(p->f.op) / (body / kUsPerS));
      }
      if (!bw.empty()) {
        knots.push_back(k);
        bws.push_back(median(bw));
      }
    }
    if (knots.empty()) break;
    m->knots_log2_bytes = knots;
    m->knots_bandwidth = bws;
    std::map<std::string, std::vector<double>> ratios;
    for (const Sample* p : s) {
      OpFeatures plain = p->f;
      double body_pred = m->predictUs(plain, d) - m->t0_us;
      double body = p->us - m->t0_us;
      if (body_pred > 0 && body > 0)
        ratios[p->f.op].push_back(body / body_pred * m->factor(p->f.op));
    }
    for (auto& [op, r] : ratios) {
      if (r.size() >= 3) m->op_factor[op] = median(r);
    }
  }
  return m;
}

std::shared_ptr<ConstantModel> fitConstant(const std::vector<const Sample*>& s, const DeviceSpec&) {
  auto m = std::make_shared<ConstantModel>();
  std::map<std::string, std::vector<double>> per_op;
  std::vector<double> all;
  for (const Sample* p : s) {
    per_op[p->f.op].push_back(p->us);
    all.push_back(p->us);
  }
  m->default_us = median(all);
  for (auto& [op, v] : per_op) m->op_us[op] = median(v);
  return m;
}

std::shared_ptr<AlphaBetaModel> fitAlphaBeta(const std::vector<const Sample*>& s,
                                             const DeviceSpec& d) {
  auto m = AlphaBetaModel::fromDevice(d);
  auto solve = [](const std::vector<const Sample*>& group, AlphaBetaModel::Params* out) {
    std::vector<std::vector<double>> rows;
    std::vector<double> y;
    for (const Sample* p : group) {
      AlphaBetaTerms t = alphaBetaTerms(p->f.collective, p->f.world_size);
      if (t.latency_steps <= 0) continue;
      rows.push_back({t.latency_steps, t.byte_factor * p->f.message_bytes});
      y.push_back(p->us / kUsPerS);
    }
    if (rows.size() < 2) return false;
    std::vector<double> x = relativeLeastSquares(rows, y);
    out->alpha_s = std::max(0.0, x[0]);
    if (x[1] > 0) out->beta_s_per_byte = x[1];
    return true;
  };
  std::map<std::string, std::vector<const Sample*>> groups;
  for (const Sample* p : s) groups[canonicalCollective(p->f.collective)].push_back(p);
  for (auto& [name, group] : groups) {
    AlphaBetaModel::Params p = m->fallback;
    if (solve(group, &p)) m->per_collective[name] = p;
  }
  solve(s, &m->fallback);
  return m;
}

}  // namespace tracetwin::predictors
