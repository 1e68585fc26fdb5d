#include "predictors/host/code_cold.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/errors.h"
#include "core/statistics.h"
#include "predictors/models/json_fields.h"

namespace tracetwin::predictors {
namespace {

double share(double idle_us, double tau_us) { return 1.0 - std::exp(-idle_us / tau_us); }

// Penalties for one tau: P from the pairs with a short previous op, medians
// of (cold - warm) / share per op, family and overall; then S, the median
// over the other pairs of what P leaves. Clamped at 0: a cold cache does not
// make code faster.
CodeColdModel penaltiesFor(const std::vector<CodeColdPair>& pairs, double tau_us) {
  CodeColdModel m;
  m.tau_us = tau_us;
  std::map<std::string, std::vector<double>> by_op, by_family;
  std::vector<double> all;
  auto rewarmed = [&](const CodeColdPair& p) { return p.previous_us < tau_us / 20; };
  // A pair whose idle time is short for this tau says little about the full
  // penalty and divides its noise by a small share (an op named like the
  // spacer, aten::mm, is idle for microseconds): skipped.
  constexpr double kMinShare = 0.25;
  for (const CodeColdPair& p : pairs) {
    if (!rewarmed(p) || share(p.idle_us, tau_us) < kMinShare) continue;
    const double full = (p.cold_us - p.warm_us) / share(p.idle_us, tau_us);
    by_op[p.op].push_back(full);
    by_family[p.family].push_back(full);
    all.push_back(full);
  }
  m.pairs = static_cast<int64_t>(pairs.size());
  m.all_us = all.empty() ? 0.0 : std::max(0.0, core::median(all));
  for (auto& [op, v] : by_op) {
    if (static_cast<int64_t>(v.size()) >= CodeColdModel::kMinPairs)
      m.per_op_us[op] = std::max(0.0, core::median(v));
  }
  for (auto& [family, v] : by_family) {
    if (static_cast<int64_t>(v.size()) >= CodeColdModel::kMinPairs)
      m.per_family_us[family] = std::max(0.0, core::median(v));
  }
  std::vector<double> shared;
  for (const CodeColdPair& p : pairs) {
    if (rewarmed(p) || share(p.previous_us, tau_us) < kMinShare) continue;
    const double own = m.fullPenaltyUs(p.op, p.family) * share(p.idle_us, tau_us);
    shared.push_back((p.cold_us - p.warm_us - own) / share(p.previous_us, tau_us));
  }
  m.shared_us = shared.empty() ? 0.0 : std::max(0.0, core::median(shared));
  return m;
}

}  // namespace

double CodeColdModel::fullPenaltyUs(const std::string& op, const std::string& family) const {
  if (auto it = per_op_us.find(op); it != per_op_us.end()) return it->second;
  if (auto it = per_family_us.find(family); it != per_family_us.end()) return it->second;
  return all_us;
}

double CodeColdModel::penaltyUs(const std::string& op, const std::string& family, double idle_us,
                                double previous_us) const {
  if (empty()) return 0;
  double us = 0;
  if (idle_us > 0) us += fullPenaltyUs(op, family) * share(idle_us, tau_us);
  if (previous_us > 0) us += shared_us * share(previous_us, tau_us);
  return us;
}

double CodeColdModel::ownPenaltyUs(const std::string& op, const std::string& family,
                                   double idle_us) const {
  if (empty() || idle_us <= 0) return 0;
  return fullPenaltyUs(op, family) * share(idle_us, tau_us);
}

nlohmann::json CodeColdModel::toJson() const {
  return {{"tau_us", tau_us}, {"shared_us", shared_us},         {"pairs", pairs},
          {"all_us", all_us}, {"per_family_us", per_family_us}, {"per_op_us", per_op_us}};
}

CodeColdModel CodeColdModel::fromJson(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw InputError(fmt::format("{}: code_cold: expected an object", source));
  CodeColdModel m;
  const std::string where = source + ": code_cold";
  m.tau_us = requiredNumber(j, "tau_us", where);
  m.shared_us = requiredNumber(j, "shared_us", where);
  m.pairs = requiredCount(j, "pairs", where);
  m.all_us = requiredNumber(j, "all_us", where);
  m.per_family_us = optionalNumberMap(j, "per_family_us", where, 0.0);
  m.per_op_us = optionalNumberMap(j, "per_op_us", where, 0.0);
  if (!(m.tau_us > 0) || m.all_us < 0 || m.shared_us < 0) {  // pairs: requiredCount's
    throw InputError(
        fmt::format("{}: code_cold: expected tau_us > 0 and all_us, shared_us >= 0", source));
  }
  return m;
}

CodeColdModel fitCodeCold(const std::vector<CodeColdPair>& pairs) {
  std::vector<CodeColdPair> usable;
  for (const CodeColdPair& p : pairs) {
    if (p.warm_us > 0 && p.cold_us > 0 && p.idle_us > 0 && p.previous_us > 0) usable.push_back(p);
  }
  if (usable.empty()) return {};
  CodeColdModel best;
  double best_loss = 0;
  for (double tau_ms = 0.25; tau_ms <= 200; tau_ms *= 1.25) {
    CodeColdModel m = penaltiesFor(usable, tau_ms * 1e3);
    double loss = 0;
    for (const CodeColdPair& p : usable) {
      loss +=
          std::abs(p.warm_us + m.penaltyUs(p.op, p.family, p.idle_us, p.previous_us) - p.cold_us);
    }
    if (best.pairs == 0 || loss < best_loss) best = std::move(m), best_loss = loss;
  }
  return best;
}

namespace {

template <typename Key, typename KeyOf>
std::vector<double> idleSinceLast(size_t n, const std::vector<double>& us, KeyOf key_of) {
  // Each key hashed once, to a dense id: the two passes index an array (on
  // a 100k-op graph, hashing every name twice was 2% of a prediction).
  std::vector<uint32_t> id(n);
  {
    std::unordered_map<Key, uint32_t> ids;
    ids.reserve(n / 8 + 16);
    for (size_t i = 0; i < n; ++i)
      id[i] = ids.try_emplace(key_of(i), static_cast<uint32_t>(ids.size())).first->second;
  }
  std::vector<double> idle(n, 0.0);
  // Clock at each key's last end; NaN until its first call in pass 0.
  std::vector<double> last_end(n, std::numeric_limits<double>::quiet_NaN());
  double clock = 0;
  // Pass 0 runs the iteration once so pass 1 sees the previous one.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < n; ++i) {
      double& end = last_end[id[i]];
      if (std::isnan(end)) end = clock;
      if (pass == 1) idle[i] = clock - end;
      clock += std::max(us[i], 0.0);
      end = clock;
    }
  }
  return idle;
}

}  // namespace

std::vector<double> idleSinceLastCall(const std::vector<const std::string*>& names,
                                      const std::vector<double>& us) {
  return idleSinceLast<std::string_view>(names.size(), us,
                                         [&](size_t i) { return std::string_view(*names[i]); });
}

std::vector<double> idleSinceLastCall(const std::vector<uint64_t>& keys,
                                      const std::vector<double>& us) {
  return idleSinceLast<uint64_t>(keys.size(), us, [&](size_t i) { return keys[i]; });
}

}  // namespace tracetwin::predictors
