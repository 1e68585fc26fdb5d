#include "calibration/replay_unit.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "calibration/graph_builder.h"
#include "core/errors.h"
#include "predictors/kernels/feature_shapes.h"
#include "core/op_family.h"
#include "core/statistics.h"
#include "predictors/host/code_cold.h"
#include "predictors/host/reuse_distance.h"
#include "replay/replayer.h"
#include "replay/untraced_timing.h"

namespace tracetwin::calibration {
namespace {

// Ops with the same name, schema and argument shapes are copies of one grid
// point's op: their medians are pooled into one sample.
std::string signature(const core::Node& n) {
  std::string key = n.op_schema_text;
  for (const core::Value& v : n.inputs) {
    key += '|' + v.type;
    core::forEachTensor(v, [&](const core::TensorValue& t) {
      for (int64_t d : t.shape) key += fmt::format(",{}", d);
    });
  }
  return key;
}

// Marks the nodes from `first` up to the builder's next id as case `index`'s.
void markCase(const GraphBuilder& b, core::NodeId first, size_t index,
              std::vector<size_t>* case_of) {
  if (case_of->size() < static_cast<size_t>(b.nextNodeId())) {
    case_of->resize(static_cast<size_t>(b.nextNodeId()), 0);
  }
  for (core::NodeId id = first; id < b.nextNodeId(); ++id) (*case_of)[size_t(id)] = index;
}

// Evicted unit rounds: the flush, then per case kEvictedCopies copies on
// their own tensors (cold data; the first also cold code, which the median
// of the copies leaves out), then the same ops again (hot), marked as case
// i + n.
void addEvictedRounds(const ReplayUnit& u, std::vector<size_t>& order, std::mt19937_64& rng,
                      GraphBuilder& b, std::vector<size_t>* case_of) {
  const size_t n = u.cases.size();
  for (int r = 0; r < kRounds; ++r) {
    std::shuffle(order.begin(), order.end(), rng);
    b.flush(u.flush_bytes);
    for (size_t i : order) {
      const core::NodeId first = b.nextNodeId();
      for (int k = 0; k < kEvictedCopies; ++k) u.cases[i].add_copy(b);
      const core::NodeId end = b.nextNodeId();
      markCase(b, first, i, case_of);
      b.repeatOps(first, end);
      markCase(b, end, i + n, case_of);
    }
  }
}

// Spaced unit rounds: per case a copy on its own tensors (marked i + n, not
// recorded), the stream, and the copy's ops again (case i).
void addSpacedRounds(const ReplayUnit& u, std::vector<size_t>& order, std::mt19937_64& rng,
                     GraphBuilder& b, std::vector<size_t>* case_of) {
  const size_t n = u.cases.size();
  for (int r = 0; r < kRounds; ++r) {
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t i : order) {
      const core::NodeId first = b.nextNodeId();
      u.cases[i].add_copy(b);
      const core::NodeId end = b.nextNodeId();
      markCase(b, first, i + n, case_of);
      b.flush(u.spaced_bytes);
      const core::NodeId again = b.nextNodeId();
      b.repeatOps(first, end);
      markCase(b, again, i, case_of);
    }
  }
}

// The unit's graph and, per node id, the index of the case that added it
// (an evicted unit's hot copies: the index plus the number of cases).
core::Graph buildUnit(const ReplayUnit& u, const std::string& device, uint64_t seed,
                      std::vector<size_t>* case_of) {
  if (u.cases.size() == 1 && u.busy_spacer == 0 && u.flush_bytes == 0 && u.spaced_bytes == 0) {
    core::Graph g = u.cases[0].build();
    case_of->clear();  // every node belongs to case 0
    return g;
  }
  GraphBuilder b(device == "cuda" ? "cuda:0" : device);
  std::vector<size_t> order(u.cases.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937_64 rng(seed);
  if (u.flush_bytes > 0) {
    addEvictedRounds(u, order, rng, b, case_of);
    return b.build(fmt::format("microbenchmark evicted group of {}", u.cases.size()));
  }
  if (u.spaced_bytes > 0) {
    addSpacedRounds(u, order, rng, b, case_of);
    return b.build(fmt::format("microbenchmark spaced group of {}", u.cases.size()));
  }
  const bool cold = u.busy_spacer > 0;
  for (int r = 0; r < (cold ? 1 : kRounds); ++r) {
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t i : order) {
      if (cold) b.busySpacer(u.busy_spacer);
      if (cold && u.rewarm) b.spacer();
      const core::NodeId first = b.nextNodeId();
      u.cases[i].add_copy(b);
      markCase(b, first, i, case_of);
    }
  }
  return b.build(
      fmt::format("microbenchmark {} group of {}", cold ? "cold" : "interleaved", u.cases.size()));
}

}  // namespace

bool interleavable(const MicrobenchCase& c) {
  return c.add_copy && c.copy_us > 0 && c.copy_us <= kInterleaveMaxUs;
}

int itersFor(double est_us) {
  // ~2 ms of measured work per point, between 3 and 15 iterations.
  return std::clamp(static_cast<int>(std::ceil(2000.0 / std::max(est_us, 1.0))), 3, 15);
}

namespace {

// Through the replayer a test injected, if any (CalibrationSeams).
replay::ReplayResult replayUnit(const CalibrationOptions& o, const core::Graph& graph,
                                const replay::ReplayOptions& ro) {
  return o.seams.replay ? o.seams.replay(graph, ro) : replay::replayGraph(graph, ro);
}

// The replay of `graph` again with no kernel collector, into `plain`; false
// when it did not run whole. CUPTI's activity records cost the host time on
// every launch: host times taken beside them ran 1.5-2x those of a replay
// without CUPTI on an H100 (batch_norm 41 against 20 us, conv2d 66 against
// 36, add_ 10 against 6.5), and a GPU step's time is measured without CUPTI
// (`compare`), so the host costs are too.
bool hostPassOf(const CalibrationOptions& o, const core::Graph& graph,
                const replay::ReplayOptions& timed, replay::ReplayResult* plain) {
  try {
    *plain = replayUnit(o, graph, replay::withoutCollector(timed));
  } catch (const UnavailableError&) {
    throw;
  } catch (const Error&) {
    return false;
  }
  return plain->failed.empty() && plain->skipped.empty() && !plain->per_op.empty();
}

// A Zipf case's histogram for one of its ops (forward or backward): from the
// table's rows (weight, or num_weights) and the indices' count, computed once
// per (lookups, rows, exponent).
std::vector<double> zipfReuseOfLookup(const core::Node& n, double exponent) {
  static std::map<std::tuple<int64_t, int64_t, double>, std::vector<double>> cache;
  int64_t rows = 0, lookups = 0;
  for (size_t i = 0; i < n.inputs.size() && n.schema && i < n.schema->arguments.size(); ++i) {
    const std::string& arg = n.schema->arguments[i].name;
    const core::Value& v = n.inputs[i];
    if (arg == "weight" && v.isTensor() && !v.tensor->shape.empty()) rows = v.tensor->shape[0];
    if (arg == "num_weights" && v.kind == core::ValueKind::kInt) rows = v.int_value;
    if (arg == "indices" && v.isTensor()) lookups = v.tensor->numel;
  }
  if (rows <= 0 || lookups <= 0) return {};
  auto key = std::make_tuple(lookups, rows, exponent);
  auto it = cache.find(key);
  if (it == cache.end()) {
    it = cache.emplace(key, predictors::zipfReuseHistogram(double(lookups), rows, exponent)).first;
  }
  return it->second;
}

// The Zipf cases' lookups (MicrobenchCase::zipf), each indices tensor once:
// copies of a case that read the same indices draw them once, at the first.
std::unordered_map<core::NodeId, core::IndexLaw> zipfLookupsOf(
    const ReplayUnit& u, const core::Graph& graph, const std::vector<size_t>& case_of) {
  std::unordered_map<core::NodeId, core::IndexLaw> out;
  std::unordered_set<int64_t> seen_indices;
  for (const core::Node& n : graph.nodes()) {
    if (n.name != "aten::embedding_bag" && n.name != "aten::embedding") continue;
    const size_t k = size_t(n.id) < case_of.size() ? case_of[size_t(n.id)] : 0;
    if (k >= u.cases.size() || u.cases[k].zipf <= 0 || n.inputs.size() < 2 ||
        !n.inputs[1].isTensor())
      continue;
    if (seen_indices.insert(n.inputs[1].tensor->tensor_id).second) out[n.id] = u.cases[k].zipf;
  }
  return out;
}

}  // namespace

UnitRefill unitRefillOf(const ReplayUnit& u, const CalibrationOptions& o) {
  if (o.unit_refill) return *o.unit_refill;
  // A unit sets up its own cache state (cold and interleaved groups) and
  // holds no optimizer state to settle: no untimed iterations in between,
  // unless a case's refill would rewrite what it reads (the embedding tables).
  UnitRefill refill = UnitRefill::kAll;
  for (const MicrobenchCase& c : u.cases)
    if (c.refill != UnitRefill::kAll) refill = c.refill;
  return refill;
}

CaseOutcome runCase(const ReplayUnit& u, const CalibrationOptions& o,
                    const std::string& device_name) {
  CaseOutcome out;
  std::vector<size_t> case_of;
  const core::Graph graph = buildUnit(u, o.device, o.seed, &case_of);
  replay::ReplayOptions ro;
  ro.device = o.device;
  ro.threads = o.threads;
  ro.warmup_iters = 1;
  ro.measured_iters = itersFor(u.est_us);
  const UnitRefill refill = unitRefillOf(u, o);
  ro.settle_iters = refill == UnitRefill::kSettle ? 1 : 0;
  ro.fresh_indices = refill == UnitRefill::kIndices;
  ro.seed = o.seed;
  ro.index_zipf = zipfLookupsOf(u, graph, case_of);
  if (o.adjust_replay) o.adjust_replay(ro);
  replay::ReplayResult r;
  try {
    r = replayUnit(o, graph, ro);
  } catch (const UnavailableError&) {
    throw;  // no device / no LibTorch: nothing else can run either
  } catch (const Error& e) {
    out.failure = e.what();
    return out;
  }
  if (!r.failed.empty())
    out.failure = fmt::format("{} failed: {}", r.failed[0].name, r.failed[0].reason);
  if (!r.skipped.empty() && out.failure.empty()) {
    out.failure = fmt::format("{} skipped: {}", r.skipped[0].name, r.skipped[0].reason);
  }
  // A replay whose kernels were timed (CUDA with CUPTI, or a test's fake
  // collector) gives device time per op, and its host time beside it.
  const bool on_cpu = o.device == "cpu" && !r.device_summary.collected;
  // The host side of a timed replay comes from a second one without the
  // collector (hostPassOf).
  const replay::ReplayResult* host_side = &r;
  replay::ReplayResult plain;
  if (!on_cpu && out.failure.empty() && o.host_pass_without_collector &&
      hostPassOf(o, graph, ro, &plain))
    host_side = &plain;
  std::unordered_map<core::NodeId, double> host_call_us;  // the host pass's, by op
  if (host_side != &r)
    for (const replay::OpMeasurement& m : plain.per_op) host_call_us[m.id] = m.cpu_us;
  // Measured time since each op's previous call (code_cold.h), from the
  // per-op medians in graph order.
  std::unordered_map<core::NodeId, double> idle_us, previous_us;
  if (on_cpu) {
    std::unordered_map<core::NodeId, double> med;
    for (const replay::OpMeasurement& m : r.per_op) med[m.id] = m.cpu_us;
    std::vector<const std::string*> names;
    std::vector<double> us;
    std::vector<core::NodeId> ids;
    for (const core::Node& n : graph.nodes()) {
      if (!core::isOperator(n.category)) continue;
      names.push_back(&n.name.str());
      us.push_back(med.count(n.id) ? med[n.id] : 0.0);
      ids.push_back(n.id);
    }
    const std::vector<double> idle = predictors::idleSinceLastCall(names, us);
    for (size_t i = 0; i < ids.size(); ++i) {
      idle_us[ids[i]] = idle[i];
      previous_us[ids[i]] = us[i > 0 ? i - 1 : us.size() - 1];
    }
  }
  // Each op's inputs' reuse distance in the unit, as the predictor finds
  // them in an iteration (the rows carry them to the trees).
  std::unordered_map<core::NodeId, double> reuse_bytes;
  {
    std::vector<const core::Node*> replayed;
    for (const replay::OpMeasurement& m : r.per_op)
      if (const core::Node* node = graph.findNode(m.id)) replayed.push_back(node);
    const std::vector<double> reuse = predictors::inputReuseBytes(replayed, o.private_cache_bytes);
    for (size_t i = 0; i < replayed.size(); ++i) reuse_bytes[replayed[i]->id] = reuse[i];
  }
  auto caseOf = [&](core::NodeId id) {
    return size_t(id) < case_of.size() ? case_of[size_t(id)] : size_t{0};
  };
  // Identical copies of one case's op: the first copy's id, and per copy its
  // time, host time and kernel count.
  struct Copies {
    core::NodeId first = core::kNoNode;
    std::vector<double> us, host_us, kernels, reuse;
  };
  std::map<std::pair<size_t, std::string>, Copies> groups;
  for (const replay::OpMeasurement& m : r.per_op) {
    const core::Node* node = graph.findNode(m.id);
    if (node == nullptr || node->scope == kSpacerScope) continue;
    // Only the family under test gives samples: the copy grid's transpose,
    // timed right after a 1-5 ms contiguous of the copy before, took 7-46 us
    // against ~1 us in the view grid, and its 15 rows alone took the view
    // family's hold-out GMAE from 12% to 59% (docs/calibration.md).
    const size_t case_index = caseOf(m.id);
    if (core::opFamily(*node) != u.cases[case_index % u.cases.size()].family) continue;
    if (u.spaced_bytes > 0 && case_index >= u.cases.size()) continue;  // the copy before the stream
    Copies& g = groups[{case_index, signature(*node)}];
    if (g.us.empty()) g.first = m.id;
    g.us.push_back(on_cpu ? m.cpu_us : m.device_us);
    const auto host_call = host_call_us.find(m.id);
    g.host_us.push_back(host_call != host_call_us.end() ? host_call->second : m.cpu_us);
    g.kernels.push_back(double(m.kernels));
    const auto reuse = reuse_bytes.find(m.id);
    if (reuse != reuse_bytes.end()) g.reuse.push_back(reuse->second);
  }
  // What the host loop held beyond the ops' calls: on a CPU the iteration,
  // on a GPU the loop that issued it (the iteration is the device's).
  const double host_iteration_ms = on_cpu ? r.iteration_ms_median : host_side->host_loop_ms;
  if (out.failure.empty() && host_iteration_ms > 0) {
    predictors::BetweenOpsSample b;
    b.iteration_us = host_iteration_ms * 1e3;
    b.between_us = b.iteration_us;
    std::vector<const core::Node*> replayed;
    for (const replay::OpMeasurement& m : host_side->per_op) {
      b.between_us -= m.cpu_us;
      b.op_us += m.cpu_us;
      b.ops += 1;
      if (const core::Node* node = graph.findNode(m.id)) {
        b.produced += predictors::producedTensors(*node);
        replayed.push_back(node);
      }
    }
    for (int w : predictors::wrappedNumbers(replayed)) b.wrapped += w;
    out.between = b;
  }
  for (auto& [key, group] : groups) {
    const MicrobenchCase& c = u.cases[key.first % u.cases.size()];
    DatasetRow row;
    if (u.busy_spacer > 0) {
      row.case_label = fmt::format("{}{} mm{}{}", c.label, kColdSuffix, u.busy_spacer,
                                   u.rewarm ? " rewarmed" : "");
    } else if (u.flush_bytes > 0) {
      row.case_label = c.label + (key.first < u.cases.size() ? kEvictedSuffix : kEvictedHotSuffix);
    } else if (u.spaced_bytes > 0) {
      row.case_label = fmt::format("{}{}{} MiB]", c.label, kSpacedSuffix, u.spaced_bytes >> 20);
      row.sample.spaced = true;
    } else {
      row.case_label = c.label;
    }
    row.idle_us = idle_us[group.first];
    row.previous_us = previous_us[group.first];
    row.sample.node = graph.node(group.first);
    row.sample.measured_us = core::median(group.us);
    if (on_cpu && !group.reuse.empty()) row.sample.reuse_bytes = core::median(group.reuse);
    if (!on_cpu) {
      row.host_us = core::median(group.host_us);
      row.kernels = static_cast<int>(std::lround(core::median(group.kernels)));
    }
    row.sample.repeated = u.cases.size() == 1;
    row.sample.device = device_name;
    if (core::opFamily(row.sample.node) == "embedding_bag") {
      row.sample.index_reuse =
          c.zipf > 0 ? zipfReuseOfLookup(row.sample.node, c.zipf) : c.index_reuse;
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

}  // namespace tracetwin::calibration
