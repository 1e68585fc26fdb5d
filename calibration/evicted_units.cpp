#include "calibration/evicted_units.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "core/op_family.h"
#include "predictors/kernels/features.h"

namespace tracetwin::calibration {

int64_t evictBytes(int64_t last_level_cache_bytes) {
  return std::max(kMinEvictBytes, 4 * last_level_cache_bytes);
}

ReplayUnit evictedUnit(const ReplayUnit& group, int64_t flush_bytes) {
  ReplayUnit u;
  const size_t n_cases = std::min(group.cases.size(), kColdCases);
  u.cases.assign(group.cases.begin(), group.cases.begin() + static_cast<std::ptrdiff_t>(n_cases));
  u.flush_bytes = flush_bytes;
  // Each round: the stream (read and write at ~10 GB/s, a conservative CPU
  // figure) and every case twice.
  const double share = static_cast<double>(n_cases) / static_cast<double>(group.cases.size());
  u.est_us = 2 * kEvictedCopies * group.est_us * share +
             kRounds * static_cast<double>(flush_bytes) / 1e4;
  return u;
}

bool isEvictedRow(const DatasetRow& r) {
  return r.case_label.find(" [evicted") != std::string::npos;
}

namespace {

// The grid point of a row whose label ends in `suffix`.
PointOf pointBefore(const std::string& suffix) {
  return [suffix](const DatasetRow& r) -> std::optional<std::string> {
    const std::string& l = r.case_label;
    if (l.size() < suffix.size() || l.compare(l.size() - suffix.size(), suffix.size(), suffix) != 0)
      return std::nullopt;
    return l.substr(0, l.size() - suffix.size());
  };
}

}  // namespace

std::vector<predictors::ColdTensorPair> evictedPairs(const std::vector<DatasetRow>& rows) {
  std::vector<predictors::ColdTensorPair> pairs;
  for (const auto& [cold, hot] :
       pairByPoint(rows, pointBefore(kEvictedSuffix), pointBefore(kEvictedHotSuffix))) {
    predictors::ColdTensorPair p;
    p.op = predictors::computeFeatures(cold->sample.node).op;
    p.family = core::opFamily(cold->sample.node);
    p.hot_us = hot->sample.measured_us;
    p.cold_us = cold->sample.measured_us;
    for (const core::Value& v : cold->sample.node.inputs) {
      core::forEachTensor(v, [&](const core::TensorValue& t) {
        if (!t.defined() || t.bytes() <= 0) return;
        p.tensors += 1;
        p.bytes += static_cast<double>(t.bytes());
      });
    }
    pairs.push_back(std::move(p));
  }
  return pairs;
}

}  // namespace tracetwin::calibration
