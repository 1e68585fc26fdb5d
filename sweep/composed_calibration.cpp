// calibrateComposed: the composed model's terms from the round-robin plan
// (composed_model.h), from its joint prediction.
#include <algorithm>
#include <string>

#include "predictors/kernels/feature_shapes.h"
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

// Adds one rank's ops to the terms; its common ops only for rank 0 (the
// same on every rank).
void addRankTerms(const PlanGraphs& g, size_t rank, const predictors::Prediction& p,
                  ComposedTerms* terms, std::array<double, 4>* per_dims,
                  std::array<double, 4>* per_dims_memory) {
  for (const predictors::OpPrediction& op : p.per_op) {
    auto it = g.tags[rank].find(op.id);
    if (it == g.tags[rank].end() || it->second.part == StepPart::kComm) continue;
    const OpTag& tag = it->second;
    const double ms = (op.predicted_us + op.cpu_us) / 1000;
    const double memory_ms = op.predicted_us * op.memory_share / 1000;
    const size_t phase = size_t(tag.phase);
    if (tag.table >= 0) {
      terms->table_ms[size_t(tag.table)][phase] += ms;
      terms->table_memory_ms[size_t(tag.table)][phase] += memory_ms;
      continue;
    }
    if (tag.table == kPerRankDimsOp) {
      (*per_dims)[phase] += ms;
      (*per_dims_memory)[phase] += memory_ms;
    } else if (rank == 0) {
      terms->common_ms[phase] += ms;
      terms->common_memory_ms[phase] += memory_ms;
    }
  }
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
  const PlanGraphs g = buildGraphs(spec, owner, spec.world_size);
  std::vector<int64_t> rank_dims(W, 0);
  for (size_t t = 0; t < T; ++t) rank_dims[size_t(owner[t])] += spec.tables[t].dim;
  int64_t total_dims = 0;
  for (int64_t d : rank_dims) total_dims += d;
  m.calibration_max_dims =
      std::max<int64_t>(1, *std::max_element(rank_dims.begin(), rank_dims.end()));

  // The terms: every rank's ops as the plan's joint prediction times them
  // (each rank with its share of the last-level cache there).
  const predictors::MultiRankPrediction p = predictGraphs(spec, g, models, opts, spec.world_size);
  ComposedTerms& terms = m.terms;
  terms.table_ms.assign(T, {0, 0, 0, 0});
  terms.table_memory_ms.assign(T, {0, 0, 0, 0});
  std::array<double, 4> per_dims{}, per_dims_memory{};
  for (size_t r = 0; r < W; ++r) {
    addRankTerms(g, r, p.ranks[r].prediction, &terms, &per_dims, &per_dims_memory);
  }
  for (size_t k = 0; k < 4; ++k) {
    terms.per_dim_ms[k] = total_dims > 0 ? per_dims[k] / double(total_dims) : 0;
    terms.per_dim_memory_ms[k] = total_dims > 0 ? per_dims_memory[k] / double(total_dims) : 0;
  }
  // The collectives' transfers.
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
  // The first all_to_all of the rank with the most dims: the largest message.
  const size_t widest =
      size_t(std::max_element(rank_dims.begin(), rank_dims.end()) - rank_dims.begin());
  for (const auto& [id, tag] : g.tags[widest]) {
    if (tag.part != StepPart::kComm) continue;
    const predictors::CommShape shape = predictors::commShape(g.graphs[widest].node(id));
    if (shape.collective.find("all_to_all") == std::string::npos) continue;
    m.a2a_scale_by_max_dims =
        a2aScales(models, opts, shape, spec.world_size, m.calibration_max_dims, total_dims);
    break;
  }
  return m;
}

}  // namespace tracetwin::sweep
