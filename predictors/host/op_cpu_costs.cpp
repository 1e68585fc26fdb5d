#include "predictors/host/op_cpu_costs.h"

#include <algorithm>
#include <string>

#include "predictors/host/between_ops.h"
#include "predictors/host/fresh_pages.h"
#include "predictors/simulation/colocation.h"
#include "predictors/simulation/op_timing.h"

namespace tracetwin::predictors {

BetweenOpTerms::BetweenOpTerms(const OverheadTable& table) {
  const auto& t1 = table.t[static_cast<int>(Overhead::kT1)];
  auto term = [&t1](const char* key) {
    auto it = t1.find(key);
    return it == t1.end() ? 0.0 : it->second.median_us;
  };
  per_output_us = term(kPerOutputTensor);
  per_wrapped_us = term(kPerWrappedNumber);
  share_of_op_time = term(kShareOfOpTime);
}

double BetweenOpTerms::us(const core::Node& node, int wrapped_numbers, double op_us) const {
  double total = share_of_op_time * op_us + per_wrapped_us * wrapped_numbers;
  if (per_output_us != 0) total += per_output_us * producedTensors(node);
  return total;
}

double OverheadLookup::us(Overhead which, const OpRecord& r, bool* used_default) {
  const core::OpSchema* schema = r.node->schema.get();
  if (schema == nullptr || schema != last_schema_) {
    last_ = perSchema(memo_, schema, [&] {
      Entry all;
      for (size_t w = 0; w < all.us.size(); ++w)
        all.us[w] = table_.us(static_cast<Overhead>(w), r.f.op, &all.used_default[w], stat_);
      return all;
    });
    last_schema_ = schema;
  }
  const auto w = static_cast<size_t>(which);
  *used_default = last_.used_default[w];
  return last_.us[w];
}

double OverheadLookup::positionT1(const char* key) const {
  const auto& t1 = table_.t[static_cast<int>(Overhead::kT1)];
  auto it = t1.find(key);
  return it == t1.end() ? -1 : it->second.us(stat_);
}

void predictLaunchCounts(std::vector<OpRecord>& recs, const std::vector<size_t>& idx,
                         const DistinctOps& shapes, const ModelSet& models) {
  if (models.launch_counts.empty() || models.device.kind != DeviceKind::kGpu || idx.empty() ||
      launchesOf(recs[idx.front()].f.family) == 0)
    return;
  // The distinct sets by op name: a family has a few names.
  std::vector<std::pair<std::string, std::vector<size_t>>> by_op;
  for (size_t d = 0; d < shapes.features.size(); ++d) {
    const std::string& op = shapes.features[d]->op;
    auto it = std::find_if(by_op.begin(), by_op.end(),
                           [&](const auto& entry) { return entry.first == op; });
    if (it == by_op.end()) it = by_op.insert(by_op.end(), {op, {}});
    it->second.push_back(d);
  }
  std::vector<int> count_of(shapes.features.size(), -1);
  std::vector<const OpFeatures*> feats;
  for (const auto& [op, distinct] : by_op) {
    if (!models.launch_counts.knows(op)) continue;
    feats.clear();
    for (size_t d : distinct) feats.push_back(shapes.features[d]);
    const std::vector<int> counts = models.launch_counts.predict(op, feats);
    for (size_t k = 0; k < distinct.size(); ++k) count_of[distinct[k]] = counts[k];
  }
  for (size_t k = 0; k < idx.size(); ++k)
    recs[idx[k]].predicted_launches = count_of[shapes.slot[k]];
}

SimOp cpuCosts(const OpRecord& r, int wrapped_numbers, OverheadLookup& table,
               const BetweenOpTerms& between, bool cpu_device, const DeviceSpec& device,
               int* defaults_used, const char* position) {
  SimOp s;
  s.thread = r.node->tid;
  s.device_us = r.out.predicted_us;
  bool used = false;
  const double position_t1 = position ? table.positionT1(position) : -1;
  if (cpu_device) {
    s.cpu_only = true;
    double t1 = position_t1 >= 0 ? position_t1 : table.us(Overhead::kT1, r, &used);
    s.t1 = used ? 0.0 : t1;
    // Freeing what the op produced, later in the iteration (between_ops.h).
    s.t1 += between.us(*r.node, wrapped_numbers, r.out.predicted_us);
    // Unmapping its outputs mapped fresh, when they are freed (fresh_pages.h).
    s.t1 += r.fresh_output_bytes / double(kPageBytes) * device.page_unmap_us;
    s.memory_share = memoryShare(r.f.bytes, device.memory_bandwidth, r.out.predicted_us);
    return s;
  }
  auto get = [&](Overhead which) {
    double v = table.us(which, r, &used);
    *defaults_used += used ? 1 : 0;
    return v;
  };
  s.t1 = position_t1 >= 0 ? position_t1 : get(Overhead::kT1);
  s.launches = r.recorded_launches >= 0    ? static_cast<int>(r.recorded_launches)
               : r.predicted_launches >= 0 ? r.predicted_launches
                                           : launchesOf(r.f.family);
  if (s.launches == 0) {
    s.t5 = get(Overhead::kT5);
  } else {
    s.t2 = get(Overhead::kT2);
    s.t3 = get(Overhead::kT3);
    s.t4 = get(Overhead::kT4);
    s.t5 = get(Overhead::kT5);
  }
  s.t1 += between.us(*r.node, wrapped_numbers, hostUs(s));
  return s;
}

void scaleHostCosts(double scale, SimOp* s) {
  if (scale == 1.0) return;
  for (double* t : {&s->t1, &s->t2, &s->t3, &s->t4, &s->t5}) *t *= scale;
}

}  // namespace tracetwin::predictors
