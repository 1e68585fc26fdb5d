#include "predictors/host/cold_tensors.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/errors.h"
#include "core/statistics.h"
#include "predictors/models/json_fields.h"

namespace tracetwin::predictors {

double ColdTensorModel::perTensorUs(const std::string& family) const {
  auto it = per_family_us.find(family);
  return it != per_family_us.end() ? it->second : all_us;
}

nlohmann::json ColdTensorModel::toJson() const {
  return {{"pairs", pairs}, {"all_us", all_us}, {"per_family_us", per_family_us}};
}

ColdTensorModel ColdTensorModel::fromJson(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw InputError(fmt::format("{}: cold_tensors: expected an object", source));
  const std::string where = source + ": cold_tensors";
  ColdTensorModel m;
  m.pairs = requiredCount(j, "pairs", where);
  m.all_us = requiredNumber(j, "all_us", where);
  m.per_family_us = optionalNumberMap(j, "per_family_us", where, 0.0);
  if (m.all_us < 0) {  // pairs: requiredCount's
    throw InputError(fmt::format("{}: expected all_us >= 0", where));
  }
  return m;
}

ColdTensorModel fitColdTensors(const std::vector<ColdTensorPair>& pairs, double dram_bandwidth) {
  std::map<std::string, std::vector<double>> by_family;
  std::vector<double> all;
  for (const ColdTensorPair& p : pairs) {
    if (!(p.hot_us > 0 && p.cold_us > 0 && p.tensors > 0)) continue;
    const double dram_us = dram_bandwidth > 0 ? p.bytes / dram_bandwidth * 1e6 : 0.0;
    const double per_tensor = std::max(0.0, (p.cold_us - p.hot_us - dram_us) / p.tensors);
    by_family[p.family].push_back(per_tensor);
    all.push_back(per_tensor);
  }
  ColdTensorModel m;
  if (all.empty()) return m;
  m.pairs = static_cast<int64_t>(all.size());
  m.all_us = core::median(all);
  for (const auto& [family, v] : by_family) {
    if (static_cast<int64_t>(v.size()) >= ColdTensorModel::kMinPairs)
      m.per_family_us[family] = core::median(v);
  }
  return m;
}

}  // namespace tracetwin::predictors
