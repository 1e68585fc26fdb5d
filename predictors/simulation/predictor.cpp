// predictGraph: select ops, compute features, predict device time per family
// (batched), scale to the target device, charge CPU overheads, simulate.
#include "predictors/simulation/predictor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "core/compiled_regions.h"
#include "core/device_twins.h"
#include "core/errors.h"
#include "core/sparse_layout.h"
#include "predictors/host/between_ops.h"
#include "predictors/host/fresh_pages.h"
#include "predictors/host/op_cpu_costs.h"
#include "predictors/host/reuse_distance.h"
#include "predictors/host/step_cache_terms.h"
#include "predictors/host/step_positions.h"
#include "predictors/host/step_touches.h"
#include "predictors/kernels/sparse_rows.h"
#include "predictors/simulation/autocast_parts.h"
#include "predictors/simulation/critical_path.h"
#include "predictors/simulation/data_loading.h"
#include "predictors/simulation/device_times.h"
#include "predictors/simulation/distinct_ops.h"
#include "predictors/simulation/op_record.h"
#include "predictors/simulation/op_timing.h"
#include "predictors/simulation/prediction_notes.h"

namespace tracetwin::predictors {
namespace {

// Far beyond any what-if a valid file can ask for (a sweep's step is capped
// at 2^62 bytes of rows, ~5e15 us at 1 GB/s), yet a model file edited or
// corrupted into 1e300 us (or an overflow of such sums) used to print a
// 300-digit step, or "inf" and null in the JSON, with exit 0.
constexpr double kImplausibleUs = 1e18;  // ~32,000 years

void checkPlausible(const OpPrediction& o) {
  for (const auto& [what, us] :
       {std::pair{"device time", o.predicted_us}, std::pair{"host time", o.cpu_us}}) {
    if (!std::isfinite(us) || us > kImplausibleUs) {
      throw InputError(
          fmt::format("the model set gives op {} ({}, model {}) a {} of {} us: not "
                      "a time an op could take; check the model set's files",
                      o.id, o.name.str(), o.model.str(), what, us));
    }
  }
}

// Recorded kernel times replace the models' (PredictOptions::recorded_kernels).
// Returns how many ops took them.
int64_t applyRecordedKernels(std::vector<OpRecord>& recs, const PredictOptions& opts) {
  if (opts.recorded_kernels.empty()) return 0;
  int64_t applied = 0;
  const core::InternedText recorded("recorded");  // interned once, not per op
  for (OpRecord& r : recs) {
    auto it = opts.recorded_kernels.find(r.out.id);
    if (it == opts.recorded_kernels.end()) continue;
    r.out.predicted_us = it->second.device_us;
    r.out.model = recorded;
    r.out.code_cold_us = 0;
    r.out.cold_output_us = 0;
    r.out.cold_input_us = 0;
    r.out.cold_tensor_us = 0;
    r.out.page_fault_us = 0;
    r.fallback = false;
    r.uncalibrated = false;
    r.recorded_launches = it->second.kernels;
    ++applied;
  }
  return applied;
}

const OverheadTable& overheadTable(const ModelSet& models, const PredictOptions& opts) {
  return opts.overheads ? *opts.overheads : models.overheads;
}

// The ops predicted by an analytic base because the models never saw them,
// by name, most frequent first.
std::vector<UncalibratedOp> uncalibratedOps(const std::vector<OpRecord>& recs) {
  std::map<std::pair<std::string, std::string>, int64_t> counts;
  for (const OpRecord& r : recs) {
    if (r.uncalibrated) ++counts[{r.f.op, r.f.family}];
  }
  std::vector<UncalibratedOp> out;
  for (const auto& [key, n] : counts) out.push_back({key.first, key.second, n});
  std::stable_sort(out.begin(), out.end(), [](const UncalibratedOp& a, const UncalibratedOp& b) {
    return a.count > b.count;
  });
  return out;
}

// The ATen twin of a cuDNN or MIOpen op (kept in `twins`), else `node`.
// `no_twin`: recorded schemas that had none (aten::_cudnn_rnn_backward) or
// whose inputs did not fit the rule; their ops keep their own name and
// their family's model, fallback or children, without a throw per op.
// `vendor`: per recorded schema, whether its op is a cuDNN or MIOpen one (two
// substring searches per op were 2% of predicting a 100k-op graph).
const core::Node& cpuTwin(const core::Node& node, std::deque<core::Node>* twins,
                          std::unordered_set<const core::OpSchema*>* no_twin,
                          std::unordered_map<const core::OpSchema*, bool>* vendor) {
  const bool vendor_op = perSchema(*vendor, node, [&node] {
    return node.name.find("cudnn") != std::string::npos ||
           node.name.find("miopen") != std::string::npos;
  });
  if (!vendor_op) return node;
  if (node.schema && no_twin->count(node.schema.get())) return node;
  try {
    if (std::optional<core::Node> twin = core::substituteForDevice(node, true)) {
      twins->push_back(std::move(*twin));
      return twins->back();
    }
  } catch (const InputError&) {
  }
  if (node.schema) no_twin->insert(node.schema.get());
  return node;
}

}  // namespace

PreparedPrediction preparePrediction(const core::Graph& graph, const ModelSet& models,
                                     const PredictOptions& opts) {
  if (!(opts.host_scale > 0) || !std::isfinite(opts.host_scale)) {
    throw UsageError(fmt::format("host scale {}: expected a positive number (0.5: a host twice "
                                 "as fast)",
                                 opts.host_scale));
  }
  PreparedPrediction prepared;
  Prediction& p = prepared.p;
  const DeviceSpec& dest = opts.target ? *opts.target : models.device;
  p.device = dest.name;
  core::Selection sel = core::selectTopLevelOps(graph);
  std::vector<OpRecord> recs;
  recs.reserve(sel.ops.size());
  p.per_op.reserve(sel.ops.size());  // never grows past this: recs hold references into it
  int64_t unsized_comms = 0;
  std::unordered_map<int64_t, size_t> previous_on_thread;  // tid -> index into recs
  std::vector<std::vector<const core::Node*>> autocast_casts;  // per record
  // CPU times are those of what a CPU runs: a GPU trace's cuDNN ops as the
  // ATen twins the replay substitutes for them (core/device_twins.h).
  // cnn_big's cudnn_batch_norm_backward, a name the norm family never saw,
  // took the family's analytic base; its twin native_batch_norm_backward
  // has trees.
  std::deque<core::Node> twins;
  std::unordered_set<const core::OpSchema*> no_twin;
  std::unordered_map<const core::OpSchema*, bool> vendor;
  const bool cpu_times = dest.kind == DeviceKind::kCpu;
  const bool touches = needsStepTouches(models);
  StepTouchesBuilder step(touches ? sel.ops.size() : 0);
  const core::SparseTensors sparse = core::inferSparseTensors(graph);
  core::Node sparse_scratch;
  std::vector<std::pair<size_t, SparseAddShape>> sparse_adds;  // by record
  CommDependencies comm_deps;
  for (core::NodeId id : sel.ops) {
    if (opts.excluded.count(id)) continue;
    const core::Node& recorded = graph.node(id);
    const core::Node& n = cpu_times ? cpuTwin(recorded, &twins, &no_twin, &vendor) : recorded;
    // Under autocast: the features of what the op computed (autocast_parts.h).
    std::vector<const core::Node*>& casts = autocast_casts.emplace_back();
    const core::Node& modelled = &n == &recorded ? modelledNode(graph, n, &casts) : n;
    const auto reuse = opts.index_reuse.find(id);
    // A sparse gradient's add costs the rows it touches (kernels/sparse_rows.h).
    const core::Node& costed = sparseRowsNode(modelled, sparse, &sparse_scratch);
    if (&costed != &modelled && cpu_times && !models.sparse_add.empty()) {
      const auto shape =
          sparseAddShape(modelled, sparse, reuse == opts.index_reuse.end() ? nullptr : &reuse->second);
      if (shape) sparse_adds.emplace_back(recs.size(), *shape);
    }
    OpRecord r{&n,
               computeFeatures(costed, reuse == opts.index_reuse.end() ? nullptr : &reuse->second),
               p.per_op.emplace_back()};
    if (touches) step.add(n);
    r.shape_hash = shapeHash(r.f);
    auto [prev, first] = previous_on_thread.try_emplace(n.tid, recs.size());
    if (!first) {
      r.f.repeated = variantKey(recs[prev->second].f) == variantKey(r.f);
      prev->second = recs.size();
    }
    // An interned text compares with a literal as a view: length first, inline.
    const bool comm = r.f.family == "comm";
    if (comm && (r.f.world_size < 1 || opts.force_world_size)) {
      if (r.f.world_size < 1) ++unsized_comms;
      r.f.world_size = opts.default_world_size;
    }
    r.deps = comm_deps.observe(n, r.f.family);
    r.out.id = id;
    r.out.name = recorded.name;
    r.out.family = r.f.family;
    recs.push_back(std::move(r));
  }
  markColdInputs(recs, models, std::move(step).finish(), opts.llc_share,
                 opts.measure_llc_traffic ? &prepared.llc_traffic_bytes : nullptr);
  predictDeviceTimes(recs, graph, models, opts);
  addCastTimes(recs, autocast_casts, [&](std::vector<OpRecord>& casts) {
    for (OpRecord& c : casts) c.shape_hash = shapeHash(c.f);
    predictDeviceTimes(casts, graph, models, opts);
  });
  addColdTensorPenalties(recs, models, opts);
  addCodeColdPenalties(recs, models, opts);
  addColdDramReads(recs, models, opts);
  addFreshPageFaults(recs, models, opts, &sparse);
  // SGD's sparse adds, measured whole with their table warm and evicted
  // (kernels/sparse_add_model.h): the model's time replaces the terms above.
  for (const auto& [i, shape] : sparse_adds) {
    const double table_bytes = shape.rows * shape.dim * 4;
    recs[i].out.predicted_us =
        models.sparse_add.predictUs(shape, table_bytes > 0 ? recs[i].f.cold_bytes / table_bytes : 0);
    recs[i].out.model = "sparse_add";
    OpPrediction& o = recs[i].out;  // "of predicted_us" terms: none of them now
    o.code_cold_us = o.cold_output_us = o.cold_input_us = o.cold_tensor_us = o.page_fault_us = 0;
  }
  const int64_t recorded = applyRecordedKernels(recs, opts);

  const OverheadTable& table = overheadTable(models, opts);
  bool cpu_device = dest.kind == DeviceKind::kCpu;
  int defaults_used = 0;
  std::vector<SimOp>& sim = prepared.sim;
  sim.reserve(recs.size());
  std::vector<const core::Node*> nodes;
  nodes.reserve(recs.size());
  for (const OpRecord& r : recs) nodes.push_back(r.node);
  const BetweenOpTerms between(table);
  const OverheadStatistic statistic =
      opts.overhead_statistic_from_table && table.charge_mean ? OverheadStatistic::kMean
                                                              : opts.overhead_statistic;
  OverheadLookup lookup(table, statistic);
  const std::vector<int> wrapped =
      between.per_wrapped_us != 0 ? wrappedNumbers(nodes) : std::vector<int>(nodes.size(), 0);
  const std::vector<const char*> positions = stepPositionKeys(recs);
  for (size_t i = 0; i < recs.size(); ++i) {
    const OpRecord& r = recs[i];
    SimOp s = cpuCosts(r, wrapped[i], lookup, between, cpu_device, models.device, &defaults_used,
                       positions[i]);
    scaleHostCosts(opts.host_scale, &s);
    const bool comm = r.f.family == "comm";
    if (comm && cpu_device) {
      // Gloo runs a collective on its own thread: the op only enqueues it,
      // and the first op that touches its tensors waits for it (as the
      // distributed replay does, docs/distributed.md "Timing").
      s.cpu_only = false;
      s.launches = 1;
    }
    applyDependencies(r.deps, &s);
    if (comm) prepared.comm_bytes.push_back({i, r.f.message_bytes});
    if (s.is_comm) {
      s.stream = kCommStream;
      s.wait_stream = kComputeStream;  // gradients are ready when compute so far is done
    }
    sim.push_back(s);
  }
  const DataLoadingCharge loading = chargeDataLoading(
      graph, sel.data_loaders, recs, table, statistic, opts.host_scale, &sim);
  if (std::string note = dataLoadingNote(loading); !note.empty()) p.notes.push_back(std::move(note));
  // "0.000 ms predicted (0 ops)" for a trace whose first ProfilerStep is empty
  // read as a confident answer (a bad-input hunt): say where the ops are.
  if (sel.window && sel.ops.empty()) {
    int64_t outside = 0;
    for (const core::Node& n : graph.nodes()) outside += core::isOperator(n.category);
    if (outside > 0) {
      p.notes.push_back(fmt::format(
          "the iteration window (ids between ProfilerStep labels {} and {}) holds no ops; the "
          "trace's {} operator nodes lie outside it: this prediction is of an empty step",
          sel.window->first, sel.window->second, outside));
    }
  }
  for (size_t i = 0; i < recs.size(); ++i) {
    OpPrediction& o = recs[i].out;
    const SimOp& s = sim[i];
    o.cpu_us = s.t1 + hostUs(s);
    o.gap_us = s.t1;
    o.host_us = s.cpu_only ? o.predicted_us : hostUs(s);
    o.kernels = s.cpu_only ? -1 : s.launches;
    o.memory_share = s.memory_share;
    if (recs[i].fallback) p.unmodelled_ops.push_back(o);
    checkPlausible(o);
  }
  p.uncalibrated_ops = uncalibratedOps(recs);
  addPredictionNotes({models, opts, cpu_device, recorded, recs.size(), unsized_comms, defaults_used},
                     &p);
  // Compiled regions whose kernels the trace lacks predict too short a step.
  for (std::string& w : core::summarizeCompiled(graph, sel).warnings) p.notes.push_back(std::move(w));
  // What the reader warned of (op_schemas it could not parse, names that are
  // not their schema's operator, a newer schema) bears on the prediction too.
  for (const std::string& w : graph.warnings) p.notes.push_back("the trace: " + w);
  return prepared;
}

void completePrediction(const SimResult& res, Prediction* p) {
  if (!std::isfinite(res.iteration_us) || res.iteration_us > kImplausibleUs) {
    throw InputError(
        fmt::format("the model set's times add up to a step of {} us: not a time a "
                    "step could take; check the model set's files",
                    res.iteration_us));
  }
  p->iteration_ms = res.iteration_us / 1000.0;
  p->breakdown = {res.device_active_us / 1000.0, res.device_idle_us / 1000.0,
                  res.cpu_bound_us / 1000.0, res.exposed_comm_us / 1000.0};
}

Prediction predictGraph(const core::Graph& graph, const ModelSet& models,
                        const PredictOptions& opts) {
  PreparedPrediction prepared = preparePrediction(graph, models, opts);
  SimResult res = simulate(prepared.sim, opts.keep_schedule);
  completePrediction(res, &prepared.p);
  if (opts.keep_schedule) attachSchedule(prepared.sim, &res, &prepared.p);
  return std::move(prepared.p);
}

void attachSchedule(const std::vector<SimOp>& sim, SimResult* res, Prediction* p) {
  // per_op holds the records in the order of the simulated ops.
  p->schedule.clear();
  p->schedule.reserve(sim.size());
  for (size_t i = 0; i < sim.size() && i < res->schedule.size(); ++i) {
    const SimOp& s = sim[i];
    p->schedule.push_back(
        {p->per_op.at(i).id, s.thread, s.stream, s.cpu_only, std::move(res->schedule[i])});
  }
}

}  // namespace tracetwin::predictors
