#include "calibration/cold_units.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "core/op_family.h"
#include "predictors/features.h"

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
  std::map<std::pair<std::string, std::string>, const DatasetRow*> warm;
  for (const DatasetRow& r : rows) {
    if (!isColdRow(r) && !r.sample.repeated) warm[{r.case_label, r.sample.node.name}] = &r;
  }
  std::vector<predictors::CodeColdPair> pairs;
  for (const DatasetRow& r : rows) {
    if (!isColdRow(r)) continue;
    const std::string base = r.case_label.substr(0, r.case_label.find(kColdSuffix));
    auto it = warm.find({base, r.sample.node.name});
    if (it == warm.end()) continue;
    predictors::CodeColdPair p;
    p.op = predictors::computeFeatures(r.sample.node).op;
    p.family = core::opFamily(r.sample.node);
    p.warm_us = it->second->sample.measured_us;
    p.cold_us = r.sample.measured_us;
    p.idle_us = r.idle_us;
    p.previous_us = r.previous_us;
    pairs.push_back(std::move(p));
  }
  return pairs;
}

}  // namespace tracetwin::calibration
