#include "calibration/evicted_units.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "core/op_family.h"
#include "predictors/features.h"

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

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::vector<predictors::ColdTensorPair> evictedPairs(const std::vector<DatasetRow>& rows) {
  const std::string cold_suffix = kEvictedSuffix;
  const std::string hot_suffix = kEvictedHotSuffix;
  std::map<std::pair<std::string, std::string>, const DatasetRow*> hot;
  for (const DatasetRow& r : rows) {
    if (!endsWith(r.case_label, hot_suffix)) continue;
    const std::string base = r.case_label.substr(0, r.case_label.size() - hot_suffix.size());
    hot[{base, r.sample.node.name}] = &r;
  }
  std::vector<predictors::ColdTensorPair> pairs;
  for (const DatasetRow& r : rows) {
    if (!endsWith(r.case_label, cold_suffix)) continue;
    const std::string base = r.case_label.substr(0, r.case_label.size() - cold_suffix.size());
    auto it = hot.find({base, r.sample.node.name});
    if (it == hot.end()) continue;
    predictors::ColdTensorPair p;
    p.op = predictors::computeFeatures(r.sample.node).op;
    p.family = core::opFamily(r.sample.node);
    p.hot_us = it->second->sample.measured_us;
    p.cold_us = r.sample.measured_us;
    for (const core::Value& v : r.sample.node.inputs) {
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
