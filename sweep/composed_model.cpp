// A plan's step from the composed model's terms (composed_model.h); the
// terms come from composed_calibration.cpp.
#include "sweep/composed_model.h"

#include <algorithm>

#include "predictors/simulation/colocation.h"

namespace tracetwin::sweep {
namespace {

// From a to b as x goes from x0 to x1, held outside.
double between(double a, double b, double x, double x0, double x1) {
  if (!(x1 > x0)) return x <= x0 ? a : b;
  const double w = std::clamp((x - x0) / (x1 - x0), 0.0, 1.0);
  return a + w * (b - a);
}

using Phases = std::array<double, 4>;

// A rank's common and per-dim terms at `part`: piecewise linear between the
// calibration ranks (ascending parts), held outside them.
RankTerms rankTermsAt(const std::vector<RankTerms>& points, double part) {
  if (points.empty()) return {};
  size_t hi = 0;
  while (hi < points.size() && points[hi].part < part) ++hi;
  if (hi == 0) return points.front();
  if (hi == points.size()) return points.back();
  const RankTerms &a = points[hi - 1], &b = points[hi];
  RankTerms out;
  out.part = part;
  const auto blend = [&](const Phases& x, const Phases& y, Phases* to) {
    for (size_t k = 0; k < 4; ++k) (*to)[k] = between(x[k], y[k], part, a.part, b.part);
  };
  blend(a.common_ms, b.common_ms, &out.common_ms);
  blend(a.common_memory_ms, b.common_memory_ms, &out.common_memory_ms);
  blend(a.per_dim_ms, b.per_dim_ms, &out.per_dim_ms);
  blend(a.per_dim_memory_ms, b.per_dim_memory_ms, &out.per_dim_memory_ms);
  return out;
}

}  // namespace

std::vector<double> ComposedModel::tableCosts() const {
  // At round robin's part of the traffic: the greedy strategy spreads the tables.
  const RankTerms even = rankTermsAt(rank_terms, 1.0 / double(world_size));
  std::vector<double> cost;
  for (size_t t = 0; t < dims.size(); ++t) {
    const Phases& ms = spread.ms[t];
    cost.push_back(ms[0] + ms[1] + ms[2] + ms[3] +
                   double(dims[t]) * (even.per_dim_ms[0] + even.per_dim_ms[2]));
  }
  return cost;
}

PlanResult ComposedModel::estimate(const Plan& plan) const {
  PlanResult res;
  res.plan = plan;
  const size_t W = size_t(world_size);
  std::vector<double> part(W, 0.0);  // each rank's part of the tables' traffic
  std::vector<int64_t> rank_dims(W, 0);
  for (size_t t = 0; t < plan.owner.size(); ++t) {
    part[size_t(plan.owner[t])] += table_part[t];
    rank_dims[size_t(plan.owner[t])] += dims[t];
  }
  std::vector<Phases> rank_ms(W), rank_memory_ms(W);
  std::vector<double> embedding(W, 0.0);
  int64_t max_dims = 0;
  for (size_t r = 0; r < W; ++r) {
    const RankTerms at = rankTermsAt(rank_terms, part[r]);
    const double d = double(rank_dims[r]);
    for (size_t k = 0; k < 4; ++k) {
      rank_ms[r][k] = at.common_ms[k] + d * at.per_dim_ms[k];
      rank_memory_ms[r][k] = at.common_memory_ms[k] + d * at.per_dim_memory_ms[k];
      embedding[r] += d * at.per_dim_ms[k];
    }
    max_dims = std::max(max_dims, rank_dims[r]);
  }
  for (size_t t = 0; t < plan.owner.size(); ++t) {
    const size_t r = size_t(plan.owner[t]);
    const double f = part[r], f0 = spread_part[t];
    for (size_t k = 0; k < 4; ++k) {
      const double ms = between(spread.ms[t][k], gathered.ms[t][k], f, f0, 1);
      rank_ms[r][k] += ms;
      embedding[r] += ms;
      rank_memory_ms[r][k] += between(spread.memory_ms[t][k], gathered.memory_ms[t][k], f, f0, 1);
    }
  }
  const double a2a_scale = size_t(max_dims) < a2a_scale_by_max_dims.size()
                               ? a2a_scale_by_max_dims[size_t(max_dims)]
                               : double(max_dims) / double(calibration_max_dims);
  // When each rank is done with a phase, all having started it together.
  const auto finish = [&](size_t phase) {
    std::vector<double> alone(W), memory(W);
    for (size_t r = 0; r < W; ++r) {
      alone[r] = rank_ms[r][phase];
      memory[r] = alone[r] > 0 ? std::min(1.0, rank_memory_ms[r][phase] / alone[r]) : 0.0;
    }
    return predictors::sharedFinishTimes(alone, cores, threads, memory_contention, memory);
  };
  // A phase that ends at a collective ends at its expected latest arrival.
  const auto latest = [&](const std::vector<double>& ready) {
    std::vector<double> sigma(W, 0.0);
    for (size_t r = 0; r < W; ++r) sigma[r] = jitter.sigmaUs(world_size, ready[r] * 1e3) / 1e3;
    return predictors::expectedMaxOfNormals(ready, sigma);
  };
  const std::vector<double> end_a = finish(0), end_d = finish(1), end_c = finish(2),
                            end_e = finish(3);
  const double max_a = latest(end_a);
  const double max_d = latest(end_d);
  const double max_c = latest(end_c);
  const double max_e = *std::max_element(end_e.begin(), end_e.end());
  const double comm = (a2a_fwd_ms + a2a_bwd_ms) * a2a_scale + allreduce_ms;
  res.predicted_ms = max_a + max_d + max_c + max_e + comm;
  double busy_max = 0, busy_sum = 0;
  for (size_t r = 0; r < W; ++r) {
    RankResult rr;
    rr.rank = int(r);
    rr.embedding_ms = embedding[r];
    rr.dense_ms = rank_ms[r][0] + rank_ms[r][1] + rank_ms[r][2] + rank_ms[r][3] - embedding[r];
    rr.comm_ms = comm;
    rr.wait_ms = (max_a - end_a[r]) + (max_d - end_d[r]) + (max_c - end_c[r]);
    rr.iteration_ms = res.predicted_ms - (max_e - end_e[r]);
    const double busy = rr.embedding_ms + rr.dense_ms;
    busy_max = std::max(busy_max, busy);
    busy_sum += busy;
    res.ranks.push_back(rr);
  }
  const double mean = busy_sum / double(W);
  res.imbalance = mean > 0 ? busy_max / mean - 1 : 0;
  return res;
}

}  // namespace tracetwin::sweep
