// predictDeviceTimes (device_times.h) and the ways it times what no model
// covers: an op's children or ATen's RNN steps, Triton kernels by a
// family's model.
#include "predictors/simulation/device_times.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "core/errors.h"
#include "predictors/host/op_cpu_costs.h"
#include "predictors/host/reuse_distance.h"
#include "predictors/kernels/attention_gemms.h"
#include "predictors/kernels/cross_device.h"
#include "predictors/kernels/fused_kernels.h"
#include "predictors/kernels/rnn_steps.h"
#include "predictors/kernels/xgb_model.h"
#include "predictors/simulation/distinct_ops.h"
#include "predictors/simulation/family_model.h"

namespace tracetwin::predictors {
namespace {

// The operator nodes directly under `node`, looking through labels.
void childOps(const core::Graph& graph, const core::Node& node,
              std::vector<const core::Node*>* out) {
  for (core::NodeId id : node.children) {
    const core::Node* c = graph.findNode(id);
    if (c == nullptr) continue;
    if (core::isOperator(c->category)) {
      out->push_back(c);
    } else {
      childOps(graph, *c, out);
    }
  }
}

// Predicts `r` as the sum of `parts` (ops with a count each), each by its own
// family's model (and so on down). Returns false (and leaves `r` alone) when
// there are no parts or none of them has a model.
bool predictAsSum(OpRecord& r, const std::vector<std::pair<const core::Node*, double>>& parts,
                  const std::string& label, const core::Graph& graph, const ModelSet& models,
                  const PredictOptions& opts) {
  if (parts.empty()) return false;
  std::vector<OpRecord> sub;
  std::vector<OpPrediction> sub_out(parts.size());
  sub.reserve(parts.size());
  for (const auto& [node, count] : parts) {
    OpRecord c{node, computeFeatures(*node), sub_out[sub.size()]};
    c.shape_hash = shapeHash(c.f);
    if (!sub.empty()) c.f.repeated = variantKey(sub.back().f) == variantKey(c.f);
    // A part's inputs come from the parts before it: as close as its own
    // tensors (the parts are not in the iteration's walk).
    c.f.reuse_bytes = aloneReuseBytes(*node, models.device.privateCacheBytes());
    sub.push_back(std::move(c));
  }
  predictDeviceTimes(sub, graph, models, opts);
  double total = 0;
  size_t unmodelled = 0;
  for (size_t k = 0; k < sub.size(); ++k) {
    total += parts[k].second * sub[k].out.predicted_us;
    unmodelled += sub[k].fallback ? 1 : 0;
  }
  if (unmodelled == sub.size()) return false;  // no better than the op's own fallback
  r.out.predicted_us = total;
  r.out.model = fmt::format("{}:{}", label, sub.size());
  r.fallback = unmodelled > 0;  // still listed while any part is a fallback
  return true;
}

// A fused attention op the models never saw (none of the calibrations
// measures attention) as the GEMMs it computes (attention_gemms.h), before
// its recorded children, which are the same kernel under other names.
// False when `r` is not one.
bool predictAsAttention(OpRecord& r, const core::Graph& graph, const ModelSet& models,
                        const PredictOptions& opts) {
  const std::vector<StandInOp> gemms = attentionGemms(*r.node);
  std::vector<std::pair<const core::Node*, double>> parts;
  for (const StandInOp& g : gemms) parts.push_back({&g.node, g.count});
  return predictAsSum(r, parts, "attention_gemms", graph, models, opts);
}

// An op no model covers whose trace records the ops it ran (aten::lstm on a
// CPU: per step a linear, sigmoid_, tanh, mul and add_) is predicted as the
// sum of those children: the family fallback on its tensor bytes put lstm's
// 45 ms at 0.06 ms. A GPU trace records a fused kernel op under an RNN op
// instead (aten::_cudnn_rnn), which no model covers: there the ops of ATen's
// own step loop stand in (rnn_steps.h), as they do for an RNN op recorded
// without children.
void predictFromParts(OpRecord& r, const core::Graph& graph, const ModelSet& models,
                      const PredictOptions& opts) {
  std::vector<const core::Node*> kids;
  childOps(graph, *r.node, &kids);
  const std::vector<StandInOp> steps = rnnSteps(*r.node);
  const bool fused_rnn = std::any_of(kids.begin(), kids.end(), [](const core::Node* k) {
    return k->name.find("_rnn") != std::string::npos;
  });
  std::vector<std::pair<const core::Node*, double>> parts;
  if (steps.empty() || !fused_rnn) {
    for (const core::Node* k : kids) parts.push_back({k, 1.0});
    if (predictAsSum(r, parts, "children", graph, models, opts)) return;
    parts.clear();
  }
  for (const StandInOp& p : steps) parts.push_back({&p.node, p.count});
  predictAsSum(r, parts, "rnn_steps", graph, models, opts);
}

// Triton kernels when the set has no model of their own: the calibrated
// curve of the family they do the work of (fused_kernels.h). Returns those
// left for the device-spec fallback (no such family in the set).
std::vector<size_t> predictBorrowed(std::vector<OpRecord>& recs, const std::vector<size_t>& idx,
                                    const std::vector<uint32_t>& ids, const ModelSet& models,
                                    const PredictOptions& opts, const DeviceSpec& scale_from) {
  std::map<std::string, std::pair<const KernelModel*, std::vector<size_t>>> groups;  // by label
  std::vector<size_t> rest;
  for (size_t i : idx) {
    std::string label;
    const KernelModel* m = borrowedModel(models, recs[i].node->name, &label);
    if (m == nullptr) {
      rest.push_back(i);
      continue;
    }
    groups[label].first = m;
    groups[label].second.push_back(i);
  }
  for (const auto& [label_text, group] : groups) {
    const core::InternedText label(label_text);  // once per group: ops copy a pointer
    const std::vector<double> us =
        predictDistinct(*group.first, models.device, distinctOps(recs, group.second, ids));
    for (size_t k = 0; k < group.second.size(); ++k) {
      OpRecord& r = recs[group.second[k]];
      double t = std::max(us[k], 0.0);
      if (opts.target) {
        t = habitatScale(t, habitatGamma(r.f.flops, r.f.bytes, r.f.dtype, *opts.target), scale_from,
                         *opts.target, r.f.bytes);
      }
      r.out.predicted_us = t;
      r.out.model = label;
      r.fallback = false;
    }
  }
  return rest;
}

}  // namespace

void predictDeviceTimes(std::vector<OpRecord>& recs, const core::Graph& graph,
                        const ModelSet& models, const PredictOptions& opts) {
  const std::vector<uint32_t> ids = featureIds(recs);
  // A dozen families at most (each with its precision set's models apart): a
  // linear search beats hashing every op's name, and neighbours are often of
  // one family (checked first).
  struct FamilyGroup {
    std::string family;
    const ModelSet* set;  // models.setFor(family, the ops' precision)
    std::vector<size_t> idx;
  };
  std::vector<FamilyGroup> by_family;
  // Per record, its schema: the calibrated-op check below reads it per
  // family, from here rather than from the records scattered over memory.
  std::vector<const core::OpSchema*> schema_of(recs.size());
  size_t last = 0;
  for (size_t i = 0; i < recs.size(); ++i) {
    const std::string& family = recs[i].f.family;
    const ModelSet* set = &models.setFor(family, recs[i].f.precision);
    auto same = [&](const FamilyGroup& g) { return g.family == family && g.set == set; };
    if (last >= by_family.size() || !same(by_family[last])) {
      auto it = std::find_if(by_family.begin(), by_family.end(), same);
      if (it == by_family.end()) it = by_family.insert(by_family.end(), {family, set, {}});
      last = static_cast<size_t>(it - by_family.begin());
    }
    by_family[last].idx.push_back(i);
    schema_of[i] = recs[i].node->schema.get();
  }
  // What each family's pass decided, applied to the records in one pass in
  // their order at the end: writing them family by family jumped through
  // the records and their per-op entries (tens of MB on a 100k-op graph),
  // a cache miss per op (11% of its prediction).
  struct FamilyOutcome {
    std::string family;
    DeviceSpec origin, scale_from;
    bool unmodelled = false, topology = false;
    bool comm = false;  // the family is "comm" (asked per op: no string compare)
    // The families attention ops fall in (core/op_family.h): the forward's
    // "gemm", the backwards' "other". Checked per family, not by every
    // uncalibrated op's name.
    bool may_be_attention = false;
    core::InternedText modelled_label, uncalibrated_label;  // copied to every op: pointers
  };
  constexpr uint32_t kNoOutcome = UINT32_MAX;
  std::vector<FamilyOutcome> outcomes;
  outcomes.reserve(by_family.size());
  std::vector<uint32_t> outcome_of(recs.size(), kNoOutcome);
  std::vector<double> us_of(recs.size(), 0.0);
  std::vector<uint8_t> unseen_of(recs.size(), 0);
  for (auto& [family, set, idx] : by_family) {
    // A model predicts on the device it was fitted against: a precision
    // set's on its own calibration's probes (its residuals are relative to
    // them).
    const DeviceSpec& origin = set->device;
    const DeviceSpec scale_from = opts.target ? scalingOrigin(origin, *opts.target) : origin;
    if (family == "triton" && set->model(family) == nullptr) {
      idx = predictBorrowed(recs, idx, ids, models, opts, scale_from);
      if (idx.empty()) continue;
    }
    const FamilyModel chosen = familyModel(family, *set, opts);
    const KernelModel* model = chosen.model;
    const DeviceSpec& spec = *chosen.spec;
    const bool unmodelled = chosen.unmodelled;
    const DistinctOps shapes = distinctOps(recs, idx, ids);
    std::vector<double> us = predictDistinct(*model, spec, shapes);
    predictLaunchCounts(recs, idx, shapes, models);
    // Ops the models never saw (ModelSet::calibrated_ops) are listed, and
    // take the analytic base where a learned residual sits on it: the
    // residual knows nothing of their kernels. An analytic model already
    // gives them the family's default factor and fixed cost.
    const KernelModel* base = unmodelled ? model : analyticBase(model);
    std::vector<size_t> unseen_idx;
    std::vector<size_t> unseen;  // positions in idx
    const std::set<std::string>* fitted_on = unmodelled ? nullptr : set->calibratedOpsOf(family);
    if (fitted_on != nullptr) {
      std::unordered_map<const core::OpSchema*, bool> seen;
      for (size_t k = 0; k < idx.size(); ++k) {
        const size_t i = idx[k];
        if (perSchema(seen, schema_of[i], [&] { return fitted_on->count(recs[i].f.op) > 0; }))
          continue;
        unseen.push_back(k);
        unseen_idx.push_back(i);
        unseen_of[i] = 1;
      }
    }
    if (!unseen.empty() && base != model) {
      const std::vector<double> base_us =
          predictDistinct(*base, spec, distinctOps(recs, unseen_idx, ids));
      for (size_t j = 0; j < unseen.size(); ++j) us[unseen[j]] = base_us[j];
    }
    // Labels once per family, not built per op.
    // A precision set's models say so: "xgboost@bfloat16".
    const std::string precision =
        set == &models ? "" : fmt::format("@{}", core::dtypeName(recs[idx[0]].f.precision));
    FamilyOutcome& o = outcomes.emplace_back();
    o.family = family;
    o.origin = origin;
    o.scale_from = scale_from;
    o.unmodelled = unmodelled;
    o.comm = family == "comm";
    o.topology = o.comm && opts.system.has_value();
    o.may_be_attention = family == "gemm" || family == "other";
    o.modelled_label = (unmodelled ? "fallback:" + model->kind() : model->kind()) + precision;
    o.uncalibrated_label = "uncalibrated:" + base->kind() + precision;
    const auto number = static_cast<uint32_t>(outcomes.size() - 1);
    for (size_t k = 0; k < idx.size(); ++k) {
      outcome_of[idx[k]] = number;
      us_of[idx[k]] = us[k];
    }
  }
  for (size_t i = 0; i < recs.size(); ++i) {
    if (outcome_of[i] == kNoOutcome) continue;  // borrowed a family's model, done above
    const FamilyOutcome& o = outcomes[outcome_of[i]];
    OpRecord& r = recs[i];
    if (unseen_of[i]) r.uncalibrated = true;
    double t = std::max(us_of[i], 0.0);
    if (opts.target && !o.unmodelled && !o.topology) {
      t = o.comm ? commScale(t, o.origin, *opts.target, opts.comm_link)
                 : habitatScale(t, habitatGamma(r.f.flops, r.f.bytes, r.f.dtype, *opts.target),
                                o.scale_from, *opts.target, r.f.bytes);
    }
    r.out.predicted_us = t;
    r.out.model = r.uncalibrated ? o.uncalibrated_label : o.modelled_label;
    r.fallback = o.unmodelled;
    // What no model saw: a fused attention op as its GEMMs, an unmodelled
    // op as its parts.
    if (o.comm || !(o.unmodelled || r.uncalibrated)) continue;
    if (o.may_be_attention && predictAsAttention(r, graph, models, opts)) continue;
    if (o.unmodelled) predictFromParts(r, graph, models, opts);
  }
}

}  // namespace tracetwin::predictors
