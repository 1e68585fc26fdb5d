#include "predictors/comm/comm_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "core/errors.h"
#include "core/units.h"

namespace tracetwin::predictors {
namespace {

using core::kUsPerSecond;


enum class Pattern { kAllReduce, kRingHalf, kBroadcast, kBarrier, kPointToPoint, kLocal };

// Collective names as traces write them (c10d op names, NCCL names, ET
// comms attributes), mapped to one canonical name each.
const std::unordered_map<std::string, std::pair<std::string, Pattern>>& collectiveTable() {
  static const std::unordered_map<std::string, std::pair<std::string, Pattern>> t = {
      {"all_reduce", {"all_reduce", Pattern::kAllReduce}},
      {"allreduce", {"all_reduce", Pattern::kAllReduce}},
      {"allreduce_coalesced", {"all_reduce", Pattern::kAllReduce}},
      {"all_reduce_coalesced", {"all_reduce", Pattern::kAllReduce}},
      {"all_gather", {"all_gather", Pattern::kRingHalf}},
      {"allgather", {"all_gather", Pattern::kRingHalf}},
      {"_allgather_base", {"all_gather", Pattern::kRingHalf}},
      {"all_gather_base", {"all_gather", Pattern::kRingHalf}},
      {"allgather_into_tensor_coalesced", {"all_gather", Pattern::kRingHalf}},
      {"all_gather_into_tensor", {"all_gather", Pattern::kRingHalf}},
      {"reduce_scatter", {"reduce_scatter", Pattern::kRingHalf}},
      {"_reduce_scatter_base", {"reduce_scatter", Pattern::kRingHalf}},
      {"reduce_scatter_base", {"reduce_scatter", Pattern::kRingHalf}},
      {"reduce_scatter_tensor", {"reduce_scatter", Pattern::kRingHalf}},
      {"all_to_all", {"all_to_all", Pattern::kRingHalf}},
      {"alltoall", {"all_to_all", Pattern::kRingHalf}},
      {"alltoall_base", {"all_to_all", Pattern::kRingHalf}},
      {"all_to_allv", {"all_to_all", Pattern::kRingHalf}},
      {"all_to_all_single", {"all_to_all", Pattern::kRingHalf}},
      {"gather", {"gather", Pattern::kRingHalf}},
      {"scatter", {"scatter", Pattern::kRingHalf}},
      {"broadcast", {"broadcast", Pattern::kBroadcast}},
      {"reduce", {"reduce", Pattern::kBroadcast}},
      {"barrier", {"barrier", Pattern::kBarrier}},
      {"send", {"send", Pattern::kPointToPoint}},
      {"recv", {"recv", Pattern::kPointToPoint}},
      // work.wait(): completes an earlier collective on this rank; moves nothing.
      {"wait", {"wait", Pattern::kLocal}},
  };
  return t;
}

Pattern patternOf(const std::string& canonical) {
  auto it = collectiveTable().find(canonical);
  return it == collectiveTable().end() ? Pattern::kAllReduce : it->second.second;
}

}  // namespace

std::string canonicalCollective(const std::string& name) {
  std::string key = name;
  if (size_t ns = key.rfind("::"); ns != std::string::npos) key = key.substr(ns + 2);
  while (!key.empty() && key.back() == '_') key.pop_back();
  auto it = collectiveTable().find(key);
  return it == collectiveTable().end() ? key : it->second.first;
}

AlphaBetaTerms alphaBetaTerms(const std::string& collective, int64_t world_size) {
  double p = static_cast<double>(std::max<int64_t>(world_size, 1));
  if (p <= 1) return {0, 0};  // a group of one moves nothing
  switch (patternOf(canonicalCollective(collective))) {
    case Pattern::kAllReduce:
      return {2 * (p - 1), 2 * (p - 1) / p};
    case Pattern::kRingHalf:
      return {p - 1, (p - 1) / p};
    case Pattern::kBroadcast:
      return {p - 1, 1.0};
    case Pattern::kBarrier:
      return {2 * (p - 1), 0.0};  // an all-reduce of nothing
    case Pattern::kPointToPoint:
      return {1.0, 1.0};
    case Pattern::kLocal:
      return {0, 0};
  }
  return {0, 0};
}

double busBandwidthFactor(const std::string& collective, int64_t world_size) {
  double p = static_cast<double>(std::max<int64_t>(world_size, 1));
  switch (patternOf(canonicalCollective(collective))) {
    case Pattern::kAllReduce:
      return 2 * (p - 1) / p;
    case Pattern::kRingHalf:
      return (p - 1) / p;
    default:
      return 1.0;
  }
}

double busBandwidth(const std::string& collective, int64_t world_size, double bytes,
                    double seconds) {
  if (seconds <= 0) return 0.0;
  return bytes / seconds * busBandwidthFactor(collective, world_size);
}

const AlphaBetaModel::Params& AlphaBetaModel::paramsFor(const std::string& collective,
                                                        double bytes) const {
  if (auto r = regimes.find(collective); r != regimes.end() && !r->second.empty()) {
    for (const Regime& g : r->second) {
      if (bytes <= g.up_to_bytes) return g.params;
    }
    return r->second.back().params;
  }
  auto it = per_collective.find(collective);
  return it == per_collective.end() ? fallback : it->second;
}

double AlphaBetaModel::predictUs(const OpFeatures& f, const DeviceSpec&) const {
  std::string name = canonicalCollective(f.collective);
  AlphaBetaTerms terms = alphaBetaTerms(name, f.world_size);
  const Params& p = paramsFor(name, f.message_bytes);
  return (terms.latency_steps * p.alpha_s +
          terms.byte_factor * f.message_bytes * p.beta_s_per_byte) *
         kUsPerSecond;
}

nlohmann::json AlphaBetaModel::save(const std::string&, const std::string&) const {
  nlohmann::json per = nlohmann::json::object();
  for (const auto& [name, p] : per_collective) {
    per[name] = {{"alpha_s", p.alpha_s}, {"beta_s_per_byte", p.beta_s_per_byte}};
  }
  nlohmann::json j = {
      {"fallback", {{"alpha_s", fallback.alpha_s}, {"beta_s_per_byte", fallback.beta_s_per_byte}}},
      {"per_collective", per}};
  if (!regimes.empty()) {
    nlohmann::json by = nlohmann::json::object();
    for (const auto& [name, list] : regimes) {
      nlohmann::json arr = nlohmann::json::array();
      for (const Regime& g : list) {
        arr.push_back({{"up_to_bytes", g.up_to_bytes},
                       {"alpha_s", g.params.alpha_s},
                       {"beta_s_per_byte", g.params.beta_s_per_byte}});
      }
      by[name] = arr;
    }
    j["regimes"] = by;
  }
  if (!sync_jitter.empty()) j["sync_jitter"] = sync_jitter.toJson();
  return j;
}

std::shared_ptr<const KernelModel> AlphaBetaModel::fromJson(const nlohmann::json& j,
                                                            const std::string&) {
  auto read = [](const nlohmann::json& o, const std::string& where) {
    if (!o.is_object() || !o.contains("alpha_s") || !o.contains("beta_s_per_byte") ||
        !o["alpha_s"].is_number() || !o["beta_s_per_byte"].is_number()) {
      throw InputError(
          fmt::format("alpha_beta model: '{}' needs numbers alpha_s and beta_s_per_byte", where));
    }
    return Params{o["alpha_s"].get<double>(), o["beta_s_per_byte"].get<double>()};
  };
  auto m = std::make_shared<AlphaBetaModel>();
  if (!j.contains("fallback")) throw InputError("alpha_beta model: missing 'fallback'");
  m->fallback = read(j["fallback"], "fallback");
  if (j.contains("per_collective")) {
    for (const auto& [name, o] : j["per_collective"].items())
      m->per_collective[name] = read(o, name);
  }
  if (j.contains("regimes")) {
    if (!j["regimes"].is_object()) throw InputError("alpha_beta model: 'regimes' must be an object");
    for (const auto& [name, list] : j["regimes"].items()) {
      if (!list.is_array()) {
        throw InputError(fmt::format("alpha_beta model: regimes of '{}' must be a list", name));
      }
      double previous = -1;
      for (size_t i = 0; i < list.size(); ++i) {
        const std::string where = fmt::format("regimes.{}[{}]", name, i);
        const nlohmann::json& o = list[i];
        if (!o.is_object() || !o.contains("up_to_bytes") || !o["up_to_bytes"].is_number()) {
          throw InputError(fmt::format("alpha_beta model: '{}' needs a number up_to_bytes", where));
        }
        Regime g{o["up_to_bytes"].get<double>(), read(o, where)};
        if (g.up_to_bytes <= previous) {
          throw InputError(fmt::format(
              "alpha_beta model: '{}': up_to_bytes {} does not grow (previous {})", where,
              g.up_to_bytes, previous));
        }
        previous = g.up_to_bytes;
        m->regimes[name].push_back(g);
      }
    }
  }
  if (j.contains("sync_jitter")) m->sync_jitter = SyncJitter::fromJson(j["sync_jitter"]);
  return m;
}

std::shared_ptr<AlphaBetaModel> AlphaBetaModel::fromDevice(const DeviceSpec& d,
                                                           const std::string& link) {
  auto m = std::make_shared<AlphaBetaModel>();
  const LinkSpec* chosen = link.empty() ? nullptr : d.findLink(link);
  if (!link.empty() && !chosen) {
    std::string known;
    for (const LinkSpec& l : d.links) known += (known.empty() ? "" : ", ") + l.name;
    throw UsageError(fmt::format("device '{}' has no link '{}' (known: {})", d.name, link,
                                 known.empty() ? "none" : known));
  }
  for (const LinkSpec& l : d.links) {
    if (!chosen || (link.empty() && l.bandwidth > chosen->bandwidth)) chosen = &l;
  }
  if (chosen) {
    m->fallback = {chosen->latency, 1.0 / chosen->bandwidth};
  } else {
    m->fallback = {5e-6, 1.0 / 25e9};  // PCIe 4.0 x16: ~25 GB/s usable, ~5 us
  }
  return m;
}

}  // namespace tracetwin::predictors
