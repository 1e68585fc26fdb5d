// calibrateComposed: the composed model's terms (composed_model.h) from the
// joint predictions of two plans, round robin and, where the ranks share a
// CPU host, every table on rank 0; the collectives' transfers from round
// robin's.
#include <algorithm>
#include <string>

#include "predictors/kernels/feature_shapes.h"
#include "predictors/simulation/family_model.h"
#include "predictors/simulation/joint_prediction.h"
#include "sweep/composed_model.h"
#include "sweep/step_trace.h"
#include "sweep/strategies.h"

namespace tracetwin::sweep {
namespace {

// The all_to_all's transfer when the largest rank holds d dims, over its
// transfer in the calibration plan: the comm model's ratio at the two
// messages. The step's all_to_allv (step_builder.cpp) sends a rank's pooled
// vectors, world x batch x its dims, and receives batch x every table's
// dims; the message is the larger tensor, so for the largest rank it
// scales as max(world * d, all dims). Empty without the message's bytes.
std::vector<double> a2aScales(const predictors::ModelSet& models,
                              const predictors::PredictOptions& opts,
                              const predictors::CommShape& calibration, int64_t world_size,
                              int64_t calibration_dims, int64_t total_dims) {
  if (!(calibration.bytes > 0)) return {};
  predictors::OpFeatures f;
  f.family = "comm";
  f.collective = calibration.collective;
  f.world_size = calibration.world_size > 0 ? calibration.world_size : world_size;
  const auto message = [&](int64_t d) { return double(std::max(world_size * d, total_dims)); };
  const auto at = [&](int64_t d) {
    f.message_bytes = calibration.bytes * message(d) / message(calibration_dims);
    return predictors::predictCollectiveUs(f, models, opts);
  };
  const double base = at(calibration_dims);
  if (!(base > 0)) return {};
  std::vector<double> scale(size_t(total_dims) + 1);
  for (int64_t d = 0; d <= total_dims; ++d) scale[size_t(d)] = at(d) / base;
  return scale;
}

// Adds one rank's table ops to `tables` and returns its other ops' terms.
RankTerms addRankTerms(const PlanGraphs& g, size_t rank, const predictors::Prediction& p,
                       int64_t rank_dims, TableTerms* tables) {
  RankTerms own;
  own.has_dims = rank_dims > 0;
  std::array<double, 4> per_dims{}, per_dims_memory{};
  for (const predictors::OpPrediction& op : p.per_op) {
    auto it = g.tags[rank].find(op.id);
    if (it == g.tags[rank].end() || it->second.part == StepPart::kComm) continue;
    const OpTag& tag = it->second;
    const double ms = (op.predicted_us + op.cpu_us) / 1000;
    const double memory_ms = op.predicted_us * op.memory_share / 1000;
    const size_t phase = size_t(tag.phase);
    if (tag.table >= 0) {
      tables->ms[size_t(tag.table)][phase] += ms;
      tables->memory_ms[size_t(tag.table)][phase] += memory_ms;
    } else if (tag.table == kPerRankDimsOp) {
      per_dims[phase] += ms;
      per_dims_memory[phase] += memory_ms;
    } else {
      own.common_ms[phase] += ms;
      own.common_memory_ms[phase] += memory_ms;
    }
  }
  for (size_t k = 0; k < 4 && rank_dims > 0; ++k) {
    own.per_dim_ms[k] = per_dims[k] / double(rank_dims);
    own.per_dim_memory_ms[k] = per_dims_memory[k] / double(rank_dims);
  }
  return own;
}

double sum4(const std::array<double, 4>& a) { return a[0] + a[1] + a[2] + a[3]; }

// Each rank's part of the tables' traffic in a plan.
std::vector<double> rankParts(const std::vector<int>& owner, const std::vector<double>& table_part,
                              size_t ranks) {
  std::vector<double> part(ranks, 0.0);
  for (size_t t = 0; t < owner.size(); ++t) part[size_t(owner[t])] += table_part[t];
  return part;
}

// One calibration plan: its tables' terms, and each rank's other terms (a
// rank without tables keeps no per-dims terms of its own; parts unset).
TableTerms planTerms(const SweepSpec& spec, const std::vector<int>& owner, const PlanGraphs& g,
                     const predictors::MultiRankPrediction& p, std::vector<RankTerms>* ranks) {
  const size_t W = size_t(spec.world_size), T = spec.tables.size();
  TableTerms tables;
  tables.ms.assign(T, {0, 0, 0, 0});
  tables.memory_ms.assign(T, {0, 0, 0, 0});
  std::vector<int64_t> dims(W, 0);
  for (size_t t = 0; t < T; ++t) dims[size_t(owner[t])] += spec.tables[t].dim;
  for (size_t r = 0; r < W; ++r) {
    ranks->push_back(addRankTerms(g, r, p.ranks[r].prediction, dims[r], &tables));
  }
  return tables;
}

}  // namespace

ComposedModel calibrateComposed(const SweepSpec& spec, const predictors::ModelSet& models,
                                const predictors::PredictOptions& opts) {
  ComposedModel m;
  m.world_size = spec.world_size;
  for (const TableSpec& t : spec.tables) m.dims.push_back(t.dim);
  // As predictGraphs' joint prediction shares the host (default MultiRankOptions).
  const predictors::MultiRankOptions shared;
  m.cores = predictors::sharedCores(models, opts, spec.world_size, shared);
  m.threads = shared.rank_threads;
  const predictors::DeviceSpec& dest = opts.target ? *opts.target : models.device;
  m.memory_contention = dest.memory_contention.value_or(0.0);
  if (const predictors::SyncJitter* j = predictors::syncJitterOf(models, opts)) m.jitter = *j;

  const size_t W = size_t(spec.world_size), T = spec.tables.size();
  const std::vector<int> owner = roundRobinAssign(T, spec.world_size);
  std::vector<int64_t> rank_dims(W, 0);
  for (size_t t = 0; t < T; ++t) rank_dims[size_t(owner[t])] += spec.tables[t].dim;
  int64_t total_dims = 0;
  for (int64_t d : rank_dims) total_dims += d;
  m.calibration_max_dims =
      std::max<int64_t>(1, *std::max_element(rank_dims.begin(), rank_dims.end()));

  // The terms: every rank's ops as round robin's joint prediction times
  // them (each rank with its share of the last-level cache there).
  const PlanGraphs g = buildGraphs(spec, owner, spec.world_size);
  const predictors::MultiRankPrediction p = predictGraphs(spec, g, models, opts, spec.world_size);
  std::vector<RankTerms> spread_ranks;
  m.spread = planTerms(spec, owner, g, p, &spread_ranks);
  // Each table's part of the tables' traffic through the cache, by its
  // memory-bound time; the part its round-robin owner held.
  m.table_part.assign(T, 0.0);
  double all = 0;
  for (size_t t = 0; t < T; ++t) all += sum4(m.spread.memory_ms[t]);
  for (size_t t = 0; t < T; ++t) {
    m.table_part[t] = all > 0 ? sum4(m.spread.memory_ms[t]) / all : 1.0 / double(T);
  }
  const std::vector<double> rank_part = rankParts(owner, m.table_part, W);
  m.spread_part.assign(T, 0.0);
  for (size_t t = 0; t < T; ++t) m.spread_part[t] = rank_part[size_t(owner[t])];
  for (size_t r = 0; r < W; ++r) spread_ranks[r].part = rank_part[r];
  m.gathered = m.spread;
  m.rank_terms = spread_ranks;
  // Ranks of one host share its last-level cache by their traffic: a rank
  // holding more of the tables holds more of the cache, and its ops run
  // warmer than round robin's. Every table on rank 0 gives the other end
  // (part 1), and a rank with no table (part 0).
  if (m.cores > 0 && W > 1) {
    const std::vector<int> on_zero(T, 0);
    const PlanGraphs gg = buildGraphs(spec, on_zero, spec.world_size);
    const predictors::MultiRankPrediction pg =
        predictGraphs(spec, gg, models, opts, spec.world_size);
    std::vector<RankTerms> gathered_ranks;
    m.gathered = planTerms(spec, on_zero, gg, pg, &gathered_ranks);
    const std::vector<double> gathered_part = rankParts(on_zero, m.table_part, W);
    for (size_t r = 0; r < W; ++r) gathered_ranks[r].part = gathered_part[r];
    m.rank_terms.push_back(gathered_ranks[0]);
    m.rank_terms.push_back(gathered_ranks[1]);
  }
  std::stable_sort(m.rank_terms.begin(), m.rank_terms.end(),
                   [](const RankTerms& a, const RankTerms& b) { return a.part < b.part; });
  // A rank that held no dims has no per-dims terms: the nearest one's apply.
  for (size_t pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < m.rank_terms.size(); ++i) {
      const size_t k = pass == 0 ? m.rank_terms.size() - 1 - i : i;
      const size_t from = pass == 0 ? k + 1 : k - 1;
      if (m.rank_terms[k].has_dims || from >= m.rank_terms.size()) continue;
      if (!m.rank_terms[from].has_dims) continue;
      m.rank_terms[k].per_dim_ms = m.rank_terms[from].per_dim_ms;
      m.rank_terms[k].per_dim_memory_ms = m.rank_terms[from].per_dim_memory_ms;
      m.rank_terms[k].has_dims = true;
    }
  }
  // The collectives' transfers: round robin's joint prediction.
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
  // The first all_to_all (by node id: the tags are a hash map) of the rank
  // with the most dims: the largest message.
  const size_t widest =
      size_t(std::max_element(rank_dims.begin(), rank_dims.end()) - rank_dims.begin());
  int64_t first = -1;
  predictors::CommShape first_shape;
  for (const auto& [id, tag] : g.tags[widest]) {
    if (tag.part != StepPart::kComm || (first >= 0 && id > first)) continue;
    const predictors::CommShape shape = predictors::commShape(g.graphs[widest].node(id));
    if (shape.collective.find("all_to_all") == std::string::npos) continue;
    first = id;
    first_shape = shape;
  }
  if (first >= 0) {
    m.a2a_scale_by_max_dims =
        a2aScales(models, opts, first_shape, spec.world_size, m.calibration_max_dims, total_dims);
  }
  return m;
}

}  // namespace tracetwin::sweep
