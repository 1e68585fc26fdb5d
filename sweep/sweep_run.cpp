#include "sweep/sweep_run.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <tuple>
#include <unordered_map>

#include "predictors/kernels/feature_shapes.h"
#include "predictors/simulation/joint_prediction.h"
#include "sweep/composed_model.h"
#include "sweep/step_trace.h"

namespace tracetwin::sweep {

namespace {

// Every rank's memory (rankMemoryBytes), the plan's shards built once.
std::vector<int64_t> memoryByRank(const SweepSpec& spec, const std::vector<Placement>& place) {
  int64_t width = spec.dense.features, params = 0;
  for (int64_t h : spec.dense.bottom_mlp) {
    params += (width + 1) * h;
    width = h;
  }
  for (const TableSpec& t : spec.tables) width += t.dim;
  for (int64_t h : spec.dense.top_mlp) {
    params += (width + 1) * h;
    width = h;
  }
  // Dense weights and gradients on every rank.
  std::vector<int64_t> bytes(size_t(spec.world_size), 2 * 4 * params);
  for (const Shard& sh : planShards(spec, place)) {
    const int64_t weights = sh.rows * sh.dim * 4;
    int64_t& b = bytes[size_t(sh.rank)];
    b += weights;
    if (sh.kind == Sharding::kDataParallel) {
      b += 2 * weights;  // the dense gradient and its copy in the all-reduced bucket
    } else if (spec.sparse_grad) {
      b += std::min(sh.lookups, sh.rows) * sh.dim * 4 + sh.lookups * 8;
    } else {
      b += weights;
    }
  }
  return bytes;
}

}  // namespace

int64_t rankMemoryBytes(const SweepSpec& spec, const std::vector<Placement>& place, int rank) {
  return memoryByRank(spec, place).at(size_t(rank));
}

int64_t rankMemoryBytes(const SweepSpec& spec, const std::vector<int>& owner, int rank) {
  return rankMemoryBytes(spec, tableWise(owner), rank);
}

namespace {

// Graphs and part maps of one plan's ranks; the predictor's inputs point into it.
}  // namespace

PlanGraphs buildGraphs(const SweepSpec& spec, const std::vector<int>& owner, int64_t ranks) {
  return buildGraphs(spec, tableWise(owner), ranks);
}

PlanGraphs buildGraphs(const SweepSpec& spec, const std::vector<Placement>& place, int64_t ranks) {
  PlanGraphs g;
  g.shards = planShards(spec, place);
  for (int r = 0; r < ranks; ++r) {
    RankStep step = buildRankStep(spec, place, r);
    g.graphs.push_back(rankGraph(step, fmt::format("{} rank {}", spec.source, r)));
    std::unordered_map<int64_t, OpTag> tags;
    for (const OpTag& t : step.tags) tags.emplace(t.id, t);
    g.tags.push_back(std::move(tags));
  }
  return g;
}

namespace {

// A Zipf shard's index-reuse histogram, computed once per shape (a
// million-row table takes a million powers). A row-wise shard's lookups
// follow the law over its own rows of the table: a later shard's flatter
// tail from its first row (core/index_law.h), as its replay draws them.
const std::vector<double>& zipfReuse(const TableSpec& t, const Shard& sh) {
  static std::map<std::tuple<int64_t, int64_t, double, int64_t>, std::vector<double>> cache;
  auto key = std::make_tuple(sh.lookups, sh.rows, *t.zipf, sh.row_begin);
  auto it = cache.find(key);
  if (it == cache.end()) {
    it = cache
             .emplace(key, predictors::zipfReuseHistogram(double(sh.lookups), sh.rows, *t.zipf,
                                                          sh.row_begin))
             .first;
  }
  return it->second;
}

}  // namespace

predictors::MultiRankPrediction predictGraphs(const SweepSpec& spec, const PlanGraphs& g,
                                              const predictors::ModelSet& models,
                                              const predictors::PredictOptions& opts,
                                              int64_t world_size) {
  std::vector<predictors::RankInput> inputs;
  for (size_t r = 0; r < g.graphs.size(); ++r) {
    const core::Graph& graph = g.graphs[r];
    predictors::RankInput in;
    in.graph = &graph;
    in.opts = opts;
    in.opts.default_world_size = world_size;
    for (const auto& [id, tag] : g.tags[r]) {
      if (tag.shard < 0 || !spec.tables[size_t(tag.table)].zipf) continue;
      const std::string& name = graph.node(id).name;
      // The lookups, and SGD's sparse add_ (its coalesce: the distinct rows).
      if (name == "aten::embedding_bag" || name == "aten::_embedding_bag_backward" ||
          name == "aten::add_") {
        in.opts.index_reuse[id] =
            zipfReuse(spec.tables[size_t(tag.table)], g.shards[size_t(tag.shard)]);
      }
    }
    inputs.push_back(std::move(in));
  }
  predictors::MultiRankOptions mo;
  mo.every_rank_ops = true;
  return predictors::predictRanks(inputs, models, mo);
}

void checkMemory(const SweepSpec& spec, const SweepOptions& options, PlanResult* res_out) {
  PlanResult& res = *res_out;
  const Plan& plan = res.plan;
  res.ranks.clear();
  const std::vector<int64_t> memory = memoryByRank(spec, placementsOf(plan));
  for (int r = 0; r < spec.world_size; ++r) {
    RankResult rr;
    rr.rank = r;
    rr.memory_bytes = memory[size_t(r)];
    if (options.memory_limit_bytes > 0 && rr.memory_bytes > options.memory_limit_bytes &&
        res.feasible) {
      res.feasible = false;
      res.infeasible = fmt::format("rank {} needs {:.2f} GB, the device has {:.2f} GB", r,
                                   double(rr.memory_bytes) / 1e9,
                                   double(options.memory_limit_bytes) / 1e9);
    }
    res.ranks.push_back(rr);
  }
}

PlanResult predictPlan(const SweepSpec& spec, const Plan& plan, const predictors::ModelSet& models,
                       const SweepOptions& options) {
  PlanResult res;
  res.plan = plan;
  checkMemory(spec, options, &res);
  if (!res.feasible) return res;
  const PlanGraphs g = buildGraphs(spec, placementsOf(plan), spec.world_size);
  const predictors::MultiRankPrediction m =
      predictGraphs(spec, g, models, options.predict, spec.world_size);
  res.predicted_ms = m.iteration_ms;
  double busy_max = 0, busy_sum = 0;
  for (size_t r = 0; r < m.ranks.size(); ++r) {
    const predictors::RankReport& rep = m.ranks[r];
    RankResult& rr = res.ranks[r];
    rr.iteration_ms = rep.iteration_ms;
    rr.comm_ms = rep.comm_ms;
    rr.wait_ms = rep.wait_ms;
    for (const predictors::OpPrediction& op : rep.prediction.per_op) {
      auto it = g.tags[r].find(op.id);
      const StepPart part = it == g.tags[r].end() ? StepPart::kDense : it->second.part;
      const double ms = (op.predicted_us + op.cpu_us) / 1000;
      if (part == StepPart::kEmbedding) rr.embedding_ms += ms;
      if (part == StepPart::kDense) rr.dense_ms += ms;
    }
    const double busy = rr.embedding_ms + rr.dense_ms;
    busy_max = std::max(busy_max, busy);
    busy_sum += busy;
  }
  const double mean = busy_sum / double(std::max<size_t>(m.ranks.size(), 1));
  res.imbalance = mean > 0 ? busy_max / mean - 1 : 0;
  return res;
}

namespace {

void rank(std::vector<PlanResult>* plans) {
  std::stable_sort(plans->begin(), plans->end(), [](const PlanResult& a, const PlanResult& b) {
    if (a.feasible != b.feasible) return a.feasible;
    if ((a.predicted_by == "joint") != (b.predicted_by == "joint")) {
      return a.predicted_by == "joint";
    }
    return a.predicted_ms < b.predicted_ms;
  });
}

// Every plan estimated with the composed model, the best `verify` of them
// predicted jointly (docs/sweeps.md, "Speed").
std::vector<PlanResult> screened(const SweepSpec& spec, const std::vector<Plan>& plans,
                                 const predictors::ModelSet& models, const SweepOptions& options) {
  const ComposedModel composed = options.composed != nullptr
                                     ? *options.composed
                                     : calibrateComposed(spec, models, options.predict);
  std::vector<PlanResult> out;
  out.reserve(plans.size());
  for (const Plan& plan : plans) {
    PlanResult res;
    res.plan = plan;
    checkMemory(spec, options, &res);
    if (res.feasible && !plan.tableWiseOnly()) {
      res = predictPlan(spec, plan, models, options);  // the composed model is table-wise only
    } else if (res.feasible) {
      std::vector<RankResult> memory = std::move(res.ranks);
      res = composed.estimate(plan);
      for (size_t r = 0; r < res.ranks.size(); ++r) {
        res.ranks[r].memory_bytes = memory[r].memory_bytes;
      }
      res.predicted_by = "composed";
    }
    out.push_back(std::move(res));
  }
  rank(&out);
  const size_t verify = std::min(options.verify, out.size());
  for (size_t k = 0; k < verify && out[k].feasible; ++k) {
    if (out[k].predicted_by != "joint") out[k] = predictPlan(spec, out[k].plan, models, options);
    if (options.progress) options.progress(k + 1, verify);
  }
  rank(&out);
  return out;
}

}  // namespace

std::vector<PlanResult> runSweep(const SweepSpec& spec, const std::vector<Plan>& plans,
                                 const predictors::ModelSet& models, const SweepOptions& options) {
  if (plans.size() > options.full_max) return screened(spec, plans, models, options);
  std::vector<PlanResult> out;
  out.reserve(plans.size());
  std::map<std::string, size_t> seen;  // plans of one assignment are predicted once
  for (size_t k = 0; k < plans.size(); ++k) {
    auto [it, fresh] = seen.emplace(planKey(plans[k]), out.size());
    if (fresh) {
      out.push_back(predictPlan(spec, plans[k], models, options));
    } else {
      out.push_back(out[it->second]);
      out.back().plan = plans[k];
    }
    if (options.progress) options.progress(k + 1, plans.size());
  }
  rank(&out);
  return out;
}

}  // namespace tracetwin::sweep
