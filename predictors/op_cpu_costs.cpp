#include "predictors/op_cpu_costs.h"

#include "predictors/between_ops.h"
#include "predictors/fresh_pages.h"
#include "predictors/op_timing.h"

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
  const Entry e = perSchema(memo_, *r.node, [&] {
    Entry all;
    for (size_t w = 0; w < all.us.size(); ++w)
      all.us[w] = table_.us(static_cast<Overhead>(w), r.f.op, &all.used_default[w]);
    return all;
  });
  const auto w = static_cast<size_t>(which);
  *used_default = e.used_default[w];
  return e.us[w];
}

SimOp cpuCosts(const OpRecord& r, int wrapped_numbers, OverheadLookup& table,
               const BetweenOpTerms& between, bool cpu_device, double page_unmap_us,
               int* defaults_used) {
  SimOp s;
  s.thread = r.node->tid;
  s.device_us = r.out.predicted_us;
  bool used = false;
  if (cpu_device) {
    s.cpu_only = true;
    double t1 = table.us(Overhead::kT1, r, &used);
    s.t1 = used ? 0.0 : t1;
    // Freeing what the op produced, later in the iteration (between_ops.h).
    s.t1 += between.us(*r.node, wrapped_numbers, r.out.predicted_us);
    // Unmapping its outputs mapped fresh, when they are freed (fresh_pages.h).
    s.t1 += r.fresh_output_bytes / double(kPageBytes) * page_unmap_us;
    return s;
  }
  auto get = [&](Overhead which) {
    double v = table.us(which, r, &used);
    *defaults_used += used ? 1 : 0;
    return v;
  };
  s.t1 = get(Overhead::kT1);
  s.launches =
      r.recorded_launches >= 0 ? static_cast<int>(r.recorded_launches) : launchesOf(r.f.family);
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

}  // namespace tracetwin::predictors
