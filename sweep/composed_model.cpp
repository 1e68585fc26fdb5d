// A plan's step from the composed model's terms (composed_model.h); the
// terms come from composed_calibration.cpp.
#include "sweep/composed_model.h"

#include <algorithm>

#include "predictors/simulation/colocation.h"

namespace tracetwin::sweep {
std::vector<double> ComposedModel::tableCosts() const {
  std::vector<double> cost;
  for (size_t t = 0; t < dims.size(); ++t) {
    const std::array<double, 4>& ms = terms.table_ms[t];
    cost.push_back(ms[0] + ms[1] + ms[2] + ms[3] +
                   double(dims[t]) * (terms.per_dim_ms[0] + terms.per_dim_ms[2]));
  }
  return cost;
}

PlanResult ComposedModel::estimate(const Plan& plan) const {
  PlanResult res;
  res.plan = plan;
  const size_t W = size_t(world_size);
  std::vector<std::array<double, 4>> rank_ms(W, terms.common_ms);
  std::vector<std::array<double, 4>> rank_memory_ms(W, terms.common_memory_ms);
  std::vector<double> embedding(W, 0.0);
  std::vector<int64_t> rank_dims(W, 0);
  for (size_t t = 0; t < plan.owner.size(); ++t) {
    const size_t r = size_t(plan.owner[t]);
    rank_dims[r] += dims[t];
    for (size_t k = 0; k < 4; ++k) {
      rank_ms[r][k] += terms.table_ms[t][k];
      embedding[r] += terms.table_ms[t][k];
      rank_memory_ms[r][k] += terms.table_memory_ms[t][k];
    }
  }
  int64_t max_dims = 0;
  for (size_t r = 0; r < W; ++r) {
    const double d = double(rank_dims[r]);
    for (size_t k = 0; k < 4; ++k) {
      rank_ms[r][k] += d * terms.per_dim_ms[k];
      embedding[r] += d * terms.per_dim_ms[k];
      rank_memory_ms[r][k] += d * terms.per_dim_memory_ms[k];
    }
    max_dims = std::max(max_dims, rank_dims[r]);
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
