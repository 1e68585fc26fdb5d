#include "predictors/comm/topology.h"

#include <algorithm>
#include <map>

#include "core/errors.h"
#include "predictors/comm/comm_model.h"
#include "predictors/kernels/features.h"

namespace tracetwin::predictors {
namespace {

// The alpha-beta time of `pattern` ("all_reduce", "all_gather" ...) over p
// ranks on one link.
double flat(const std::string& pattern, int64_t p, double bytes, const LinkSpec& link) {
  const AlphaBetaTerms t = alphaBetaTerms(pattern, p);
  return t.latency_steps * link.latency + t.byte_factor * bytes / link.bandwidth;
}

}  // namespace

GroupPlacement placementOf(const SystemSpec& system, const std::vector<int64_t>& members) {
  std::map<int64_t, int64_t> per_node;
  for (int64_t r : members) ++per_node[system.nodeOf(r)];
  GroupPlacement g;
  g.ranks = int64_t(members.size());
  g.nodes = int64_t(per_node.size());
  for (const auto& [node, n] : per_node) g.per_node = std::max(g.per_node, n);
  return g;
}

double topologySeconds(const SystemSpec& system, const std::string& collective,
                       const std::vector<int64_t>& members, double bytes) {
  const std::string c = canonicalCollective(collective);
  const GroupPlacement g = placementOf(system, members);
  const LinkSpec& intra = system.link(system.intra_node_link);
  const LinkSpec& inter = system.link(system.inter_node_link);
  if (g.ranks <= 1) return 0;
  if (g.nodes <= 1) return flat(c, g.ranks, bytes, intra);
  if (g.per_node <= 1) return flat(c, g.ranks, bytes, inter);
  const int64_t p = g.ranks, k = g.nodes, q = g.per_node;
  const double per_node_bytes = bytes / double(q);
  if (c == "all_reduce") {
    return flat("reduce_scatter", q, bytes, intra) + flat("all_reduce", k, per_node_bytes, inter) +
           flat("all_gather", q, bytes, intra);
  }
  if (c == "all_gather") {
    return flat("all_gather", k, per_node_bytes, inter) + flat("all_gather", q, bytes, intra);
  }
  if (c == "reduce_scatter") {
    return flat("reduce_scatter", q, bytes, intra) +
           flat("reduce_scatter", k, per_node_bytes, inter);
  }
  if (c == "all_to_all") {
    const double pd = double(p), qd = double(q);
    return (qd - 1) * intra.latency + (qd - 1) / pd * bytes / intra.bandwidth +
           (pd - qd) * inter.latency + (pd - qd) / pd * bytes / inter.bandwidth;
  }
  if (c == "broadcast" || c == "reduce") {
    return flat(c, k, bytes, inter) + flat(c, q, bytes, intra);
  }
  return flat(c, p, bytes, inter);  // barrier, point-to-point, gather ...: the slower link
}

double TopologyCommModel::predictUs(const OpFeatures& f, const DeviceSpec&) const {
  std::vector<int64_t> members;
  for (int64_t r = 0; r < std::max<int64_t>(f.world_size, 1); ++r) members.push_back(r);
  return topologySeconds(system_, f.collective, members, f.message_bytes) * 1e6;
}

nlohmann::json TopologyCommModel::save(const std::string&, const std::string&) const {
  throw UsageError("the topology comm model comes from a system file (--system), not a model set");
}

}  // namespace tracetwin::predictors
