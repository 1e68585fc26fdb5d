#include "calibration/cold_units.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "core/op_family.h"
#include "predictors/kernels/features.h"

namespace tracetwin::calibration {

static_assert(kInterleaveMaxUs == predictors::CodeColdModel::kMaxOpUs,
              "the predictor applies the code-cold term to the ops the cold units measure");

ReplayUnit coldUnit(const ReplayUnit& group, int64_t spacer_n, bool rewarm) {
  ReplayUnit u;
  const size_t n_cases = std::min(group.cases.size(), kColdCases);
  u.cases.assign(group.cases.begin(), group.cases.begin() + static_cast<std::ptrdiff_t>(n_cases));
  u.busy_spacer = spacer_n;
  u.rewarm = rewarm;
  // The mm at ~4 GFLOP/s (a conservative CPU figure) plus one copy each.
  const double n = static_cast<double>(spacer_n);
  const double spacer_us = 2.0 * n * n * n / 4e3;
  const double share = static_cast<double>(n_cases) / static_cast<double>(group.cases.size());
  u.est_us = group.est_us * share / kRounds + spacer_us * static_cast<double>(n_cases);
  return u;
}

bool isColdRow(const DatasetRow& r) { return r.case_label.find(kColdSuffix) != std::string::npos; }

std::vector<predictors::CodeColdPair> coldPairs(const std::vector<DatasetRow>& rows) {
  const PointOf cold = [](const DatasetRow& r) -> std::optional<std::string> {
    if (!isColdRow(r)) return std::nullopt;
    return r.case_label.substr(0, r.case_label.find(kColdSuffix));
  };
  // The interleaved row of the point: neither cold nor among copies of itself.
  const PointOf interleaved = [](const DatasetRow& r) -> std::optional<std::string> {
    if (isColdRow(r) || r.sample.repeated) return std::nullopt;
    return r.case_label;
  };
  std::vector<predictors::CodeColdPair> pairs;
  for (const auto& [c, warm] : pairByPoint(rows, cold, interleaved)) {
    predictors::CodeColdPair p;
    p.op = predictors::computeFeatures(c->sample.node).op;
    p.family = core::opFamily(c->sample.node);
    p.warm_us = warm->sample.measured_us;
    p.cold_us = c->sample.measured_us;
    p.idle_us = c->idle_us;
    p.previous_us = c->previous_us;
    pairs.push_back(std::move(p));
  }
  return pairs;
}

}  // namespace tracetwin::calibration
