#include "predictors/models/analytic_fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>

#include "core/statistics.h"
#include "core/units.h"

namespace tracetwin::predictors {
namespace {

using core::kUsPerSecond;

using core::median;

constexpr double kMinEff = 1e-3;

double computeUs(const OpFeatures& f, const DeviceSpec& d) {
  return f.flops / d.peakFlops(f.dtype) * kUsPerSecond;
}
double memoryUs(const OpFeatures& f, const DeviceSpec& d) {
  return f.bytes / d.memory_bandwidth * kUsPerSecond;
}

}  // namespace

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

namespace {

// Fewer samples than this and an op keeps the family's (or its name's) values.
constexpr size_t kMinOpSamples = 4;

// max(compute, bytes / BW(bytes)) in microseconds under the current curve.
double unitBodyUs(const BandwidthCurveModel& m, const OpFeatures& f, const DeviceSpec& d) {
  return std::max(f.flops / d.peakFlops(f.dtype), f.bytes / m.achievedBandwidth(f.bytes)) * kUsPerSecond;
}

// t = t0[context] + k * body for one op's samples by relative least squares
// (one fixed cost after a different op, one after a copy of itself; a
// context without samples takes the other's), each t0 kept in
// [0, 0.95 * fastest of its context] and k refitted with the t0s fixed so it
// stays positive.
void fitOp(const std::vector<const Sample*>& g, const BandwidthCurveModel& m, const DeviceSpec& d,
           double* t0_mixed, double* t0_repeated, double* k) {
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  double fastest[2] = {1e300, 1e300};
  for (const Sample* p : g) {
    const int c = p->f.repeated ? 1 : 0;
    rows.push_back({c == 0 ? 1.0 : 0.0, c == 1 ? 1.0 : 0.0, unitBodyUs(m, p->f, d)});
    y.push_back(p->us);
    fastest[c] = std::min(fastest[c], p->us);
  }
  const bool has[2] = {fastest[0] < 1e300, fastest[1] < 1e300};
  std::vector<std::vector<double>> cols;  // drop the column of an absent context
  for (const auto& r : rows) {
    std::vector<double> row;
    for (int c = 0; c < 2; ++c) {
      if (has[c]) row.push_back(r[size_t(c)]);
    }
    row.push_back(r[2]);
    cols.push_back(std::move(row));
  }
  const std::vector<double> x = relativeLeastSquares(cols, y);
  double t0[2];
  size_t xi = 0;
  for (int c = 0; c < 2; ++c) {
    t0[c] = has[c] ? std::clamp(x[xi++], 0.0, 0.95 * fastest[c]) : -1.0;
  }
  if (!has[0]) t0[0] = t0[1];
  if (!has[1]) t0[1] = t0[0];
  double num = 0, den = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const double w = 1.0 / (y[i] * y[i]);
    const double t0_i = rows[i][1] > 0 ? t0[1] : t0[0];
    num += w * rows[i][2] * (y[i] - t0_i);
    den += w * rows[i][2] * rows[i][2];
  }
  *t0_mixed = t0[0];
  *t0_repeated = t0[1];
  *k = den > 0 ? std::max(num / den, 1e-3) : 1.0;
}

// Achieved bandwidth knots every two octaves of size from the samples of at
// least 64 KiB whose time is mostly body (t - t0 > 30% of t): tiny ops say
// nothing about bandwidth, only about their fixed cost, and a knot fitted
// on them (0.03 GB/s at 40 bytes) would stretch the small end of every
// op's factor. Below the first knot the curve is flat.
constexpr double kMinKnotLog2Bytes = 16;

void fitKnots(const std::vector<const Sample*>& s, BandwidthCurveModel* m) {
  double lo = 1e300, hi = 0;
  for (const Sample* p : s) {
    double lb = std::log2(std::max(p->f.bytes, 1.0));
    if (lb < kMinKnotLog2Bytes) continue;
    lo = std::min(lo, lb);
    hi = std::max(hi, lb);
  }
  std::vector<double> knots, bws;
  for (double k = lo; k <= hi + 1e-9; k += 2.0) {
    std::vector<double> bw;
    for (const Sample* p : s) {
      double lb = std::log2(std::max(p->f.bytes, 1.0));
      double body = p->us - m->t0Of(p->f);
      if (std::abs(lb - k) > 1.0 || body <= 0.3 * p->us || p->f.bytes <= 0) continue;
      bw.push_back(p->f.bytes * m->factorOf(p->f) / (body / kUsPerSecond));
    }
    if (!bw.empty()) {
      knots.push_back(k);
      bws.push_back(median(bw));
    }
  }
  if (knots.empty()) return;
  m->knots_log2_bytes = knots;
  m->knots_bandwidth = bws;
}

}  // namespace

std::shared_ptr<BandwidthCurveModel> fitBandwidthCurve(const std::vector<const Sample*>& s,
                                                       const DeviceSpec& d) {
  auto m = BandwidthCurveModel::fromDevice(d);
  if (s.size() < 3) return m;
  // Family intercept from t = t0 + bytes * slope; clamped below the fastest sample.
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  double fastest = s[0]->us;
  std::map<std::string, std::vector<const Sample*>> by_name, by_variant;
  for (const Sample* p : s) {
    rows.push_back({1.0, p->f.bytes});
    y.push_back(p->us);
    fastest = std::min(fastest, p->us);
    // An op's own factor is fitted without its "#off" variant (dropout with
    // p = 0 or train = false returns its input in ~0.2 us): weighted by 1/t^2,
    // those samples pulled the factor of a real dropout down 1000x.
    if (p->f.variant.find("#off") == std::string::npos) by_name[p->f.op].push_back(p);
    if (!p->f.variant.empty()) by_variant[p->f.variant].push_back(p);
  }
  m->t0_us = std::clamp(relativeLeastSquares(rows, y)[0], 0.0, 0.9 * fastest);
  m->op_factor.clear();
  m->op_t0_us.clear();
  // Alternate between the bandwidth knots (size dependence) and per-op fixed
  // costs and factors (op dependence); four rounds settle both.
  for (int round = 0; round < 4; ++round) {
    fitKnots(s, m.get());
    for (const auto* groups : {&by_name, &by_variant}) {
      for (const auto& [key, g] : *groups) {
        if (g.size() < kMinOpSamples) continue;
        fitOp(g, *m, d, &m->op_t0_us[key], &m->op_t0_us[key + BandwidthCurveModel::kRepeatedSuffix],
              &m->op_factor[key]);
      }
    }
  }
  // An op the sweep did not measure (sigmoid_backward, tanh_backward in an
  // LSTM) takes the family's fixed cost: the median op's, after a different
  // op. The intercept of t = t0 + bytes * slope over all ops sits near 0
  // (~0.1 us against 1-4 us per op), and put such ops at a tenth of their time.
  std::vector<double> op_t0;
  for (const auto& [key, g] : by_name) {
    if (auto it = m->op_t0_us.find(key); it != m->op_t0_us.end()) op_t0.push_back(it->second);
  }
  if (!op_t0.empty()) m->t0_us = median(op_t0);
  // On a GPU, samples that all fit in L2 are launch- and latency-bound: past
  // them, the time holds until the DRAM rate the spec allows takes over.
  const int64_t l2 = d.lastLevelCacheBytes();
  if (d.kind == DeviceKind::kGpu && l2 > 0 && d.memory_bandwidth > 0 &&
      std::exp2(m->knots_log2_bytes.back() + 1.0) < double(l2)) {
    m->extrapolate_bandwidth = 0.9 * d.memory_bandwidth;
  }
  return m;
}

std::shared_ptr<ConstantModel> fitConstant(const std::vector<const Sample*>& s, const DeviceSpec&) {
  auto m = std::make_shared<ConstantModel>();
  std::map<std::string, std::vector<double>> per_op;
  std::vector<double> all;
  std::map<std::string, std::vector<double>> per_op_repeated;
  for (const Sample* p : s) {
    (p->f.repeated ? per_op_repeated : per_op)[p->f.op].push_back(p->us);
    all.push_back(p->us);
  }
  m->default_us = median(all);
  for (auto& [op, v] : per_op_repeated) {
    m->op_us[op + BandwidthCurveModel::kRepeatedSuffix] = median(v);
    if (!per_op.count(op)) m->op_us[op] = median(v);  // no other context measured
  }
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
      y.push_back(p->us / kUsPerSecond);
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
