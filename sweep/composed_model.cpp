#include "sweep/composed_model.h"

#include <algorithm>

#include "core/errors.h"
#include "sweep/step_trace.h"
#include "sweep/strategies.h"

namespace tracetwin::sweep {

ComposedModel calibrateComposed(const SweepSpec& spec, const predictors::ModelSet& models,
                                const predictors::PredictOptions& opts) {
  ComposedModel m;
  m.world_size = spec.world_size;
  for (const TableSpec& t : spec.tables) m.dims.push_back(t.dim);
  m.table_ms.assign(spec.tables.size(), {0, 0, 0, 0});
  const std::vector<int> owner = roundRobinAssign(spec.tables.size(), spec.world_size);
  const PlanGraphs g = buildGraphs(spec, owner, spec.world_size);
  const predictors::MultiRankPrediction p = predictGraphs(spec, g, models, opts, spec.world_size);
  std::vector<int64_t> rank_dims(size_t(spec.world_size), 0);
  for (size_t t = 0; t < owner.size(); ++t) rank_dims[size_t(owner[t])] += spec.tables[t].dim;
  int64_t total_dims = 0;
  for (int64_t d : rank_dims) total_dims += d;
  m.calibration_max_dims = std::max<int64_t>(1, *std::max_element(rank_dims.begin(), rank_dims.end()));
  std::array<double, 4> per_dims_total{};
  for (size_t r = 0; r < p.ranks.size(); ++r) {
    for (const predictors::OpPrediction& op : p.ranks[r].prediction.per_op) {
      auto it = g.tags[r].find(op.id);
      if (it == g.tags[r].end() || it->second.part == StepPart::kComm) continue;
      const OpTag& tag = it->second;
      const double ms = (op.predicted_us + op.cpu_us) / 1000;
      const size_t phase = size_t(tag.phase);
      if (tag.table >= 0) {
        m.table_ms[size_t(tag.table)][phase] += ms;
      } else if (tag.table == kPerRankDimsOp) {
        per_dims_total[phase] += ms;
      } else if (r == 0) {
        m.common_ms[phase] += ms;
      }
    }
  }
  for (size_t k = 0; k < 4; ++k) {
    m.per_dim_ms[k] = total_dims > 0 ? per_dims_total[k] / double(total_dims) : 0;
  }
  int a2a = 0;
  for (const predictors::CollectiveReport& c : p.collectives) {
    const double ms = c.transfer_us / 1000;
    if (c.name == "all_reduce") {
      m.allreduce_ms = ms;
    } else if (a2a++ == 0) {
      m.a2a_fwd_ms = ms;
    } else {
      m.a2a_bwd_ms = ms;
    }
  }
  return m;
}

std::vector<double> ComposedModel::tableCosts() const {
  std::vector<double> cost;
  for (size_t t = 0; t < table_ms.size(); ++t) {
    cost.push_back(table_ms[t][0] + table_ms[t][1] + table_ms[t][2] + table_ms[t][3] +
                   double(dims[t]) * (per_dim_ms[0] + per_dim_ms[2]));
  }
  return cost;
}

PlanResult ComposedModel::estimate(const Plan& plan) const {
  PlanResult res;
  res.plan = plan;
  const size_t W = size_t(world_size);
  std::vector<std::array<double, 4>> rank_ms(W, common_ms);
  std::vector<double> embedding(W, 0.0);
  std::vector<int64_t> rank_dims(W, 0);
  for (size_t t = 0; t < plan.owner.size(); ++t) {
    const size_t r = size_t(plan.owner[t]);
    rank_dims[r] += dims[t];
    for (size_t k = 0; k < 4; ++k) {
      rank_ms[r][k] += table_ms[t][k];
      embedding[r] += table_ms[t][k];
    }
  }
  int64_t max_dims = 0;
  for (size_t r = 0; r < W; ++r) {
    for (size_t k = 0; k < 4; ++k) {
      const double d = per_dim_ms[k] * double(rank_dims[r]);
      rank_ms[r][k] += d;
      embedding[r] += d;
    }
    max_dims = std::max(max_dims, rank_dims[r]);
  }
  const double a2a_scale = double(max_dims) / double(calibration_max_dims);
  double max_a = 0, max_c = 0, max_e = 0;
  for (size_t r = 0; r < W; ++r) {
    max_a = std::max(max_a, rank_ms[r][0]);
    max_c = std::max(max_c, rank_ms[r][2]);
    max_e = std::max(max_e, rank_ms[r][3]);
  }
  const double comm = (a2a_fwd_ms + a2a_bwd_ms) * a2a_scale + allreduce_ms;
  res.predicted_ms = max_a + common_ms[1] + max_c + max_e + comm;
  double busy_max = 0, busy_sum = 0;
  for (size_t r = 0; r < W; ++r) {
    RankResult rr;
    rr.rank = int(r);
    rr.embedding_ms = embedding[r];
    rr.dense_ms = rank_ms[r][0] + rank_ms[r][1] + rank_ms[r][2] + rank_ms[r][3] - embedding[r];
    rr.comm_ms = comm;
    rr.wait_ms = (max_a - rank_ms[r][0]) + (max_c - rank_ms[r][2]);
    rr.iteration_ms = res.predicted_ms - (max_e - rank_ms[r][3]);
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
