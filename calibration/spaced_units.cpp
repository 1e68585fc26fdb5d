#include "calibration/spaced_units.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>

#include "calibration/graph_builder.h"
#include "core/op_family.h"
#include "predictors/host/step_touches.h"

namespace tracetwin::calibration {

bool spacedFamily(const std::string& family) {
  return family == "elementwise" || family == "reduction" || family == "norm" ||
         family == "softmax" || family == "copy";
}

CaseTraffic caseTraffic(const MicrobenchCase& c) {
  CaseTraffic traffic;
  if (!c.add_copy) return traffic;
  GraphBuilder b("cpu");
  c.add_copy(b);
  const core::Graph g = b.build("traffic of " + c.label);
  std::vector<const core::Node*> ops;
  for (const core::Node& n : g.nodes())
    if (core::isOperator(n.category) && core::opFamily(n) == c.family) ops.push_back(&n);
  // The predictor's touches: an output is `produced` when it lands on no
  // input's storage, i.e. not in place.
  const predictors::StepTouches step = predictors::stepTouches(ops);
  traffic.in_place = !ops.empty();
  for (size_t i = 0; i < ops.size(); ++i) {
    std::set<uint32_t> inputs;
    bool writes = false;
    for (size_t k = step.first[i]; k < step.first[i + 1]; ++k) {
      const predictors::StepTouch& t = step.touches[k];
      if (t.input && inputs.insert(t.slot).second) traffic.input_bytes += t.bytes;
      if (!t.input) writes = true;
      if (t.produced) traffic.in_place = false;
    }
    if (!writes) traffic.in_place = false;
  }
  return traffic;
}

namespace {

// Up to kSpacedCases of `sized` (sorted by bytes) at evenly spaced ranks,
// the smallest and the largest included.
void pickSpread(const std::vector<std::pair<double, const MicrobenchCase*>>& sized,
                std::vector<const MicrobenchCase*>* picked) {
  const size_t n = std::min(kSpacedCases, sized.size());
  for (size_t k = 0; k < n; ++k) {
    const size_t rank = n == 1 ? 0 : k * (sized.size() - 1) / (n - 1);
    picked->push_back(sized[rank].second);
  }
}

}  // namespace

std::vector<ReplayUnit> spacedUnits(const std::vector<MicrobenchCase>& cases) {
  std::vector<std::pair<double, const MicrobenchCase*>> in_place, new_output;
  for (const MicrobenchCase& c : cases) {
    const CaseTraffic t = caseTraffic(c);
    if (t.input_bytes >= kSpacedMinInputBytes && t.input_bytes <= kSpacedMaxInputBytes)
      (t.in_place ? in_place : new_output).emplace_back(t.input_bytes, &c);
  }
  std::vector<const MicrobenchCase*> picked;
  for (auto* sized : {&new_output, &in_place}) {
    std::stable_sort(sized->begin(), sized->end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    pickSpread(*sized, &picked);
  }
  std::vector<ReplayUnit> units;
  for (const MicrobenchCase* c : picked) {
    for (int64_t mib : kSpacedMiB) {
      ReplayUnit u;
      u.cases = {*c};
      u.spaced_bytes = mib << 20;
      // Each round: two copies and the stream (read and write at ~10 GB/s).
      u.est_us = kRounds * (2 * std::max(c->copy_us, 1.0) + static_cast<double>(mib << 20) / 1e4);
      units.push_back(std::move(u));
    }
  }
  return units;
}

}  // namespace tracetwin::calibration
