#include "core/comm/group_plan.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "core/errors.h"

namespace tracetwin::core::comm {
namespace {

// Members of the group a record_param_comms node names, empty when the trace
// does not record them.
std::vector<int> recordedMembers(const core::Node& node) {
  if (!node.comm || node.comm->global_rank_start < 0 || node.comm->pg_size <= 0) return {};
  const int64_t stride = std::max<int64_t>(node.comm->global_rank_stride, 1);
  std::vector<int> ranks;
  for (int64_t k = 0; k < node.comm->pg_size; ++k) {
    ranks.push_back(int(node.comm->global_rank_start + k * stride));
  }
  return ranks;
}

bool isWorld(const std::vector<int>& ranks, int world_size) {
  if (int(ranks.size()) != world_size) return false;
  for (int r = 0; r < world_size; ++r) {
    if (ranks[size_t(r)] != r) return false;
  }
  return true;
}

}  // namespace

GroupChoice chooseGroup(const core::Node& node, const CollectiveSpec& spec,
                        const GroupLayout& layout) {
  if (layout.same_trace) return {};
  if (node.comm && node.comm->pg_desc == "default_pg") return {};
  const std::vector<int> members = recordedMembers(node);
  if (!members.empty()) {
    if (isWorld(members, layout.world_size)) return {};
    if (members.back() >= layout.world_size) {
      return {"", fmt::format("the traced group '{}' has rank {} but the job has {} ranks",
                              node.comm->pg_name, members.back(), layout.world_size)};
    }
    return {node.comm->pg_name, ""};
  }
  if (spec.group_size < 0 || spec.group_size == layout.world_size) return {};
  return {"", fmt::format("the traced group has {} ranks ({}) and the job {}, and the trace does "
                          "not record the group's members (schema before 1.1.0): replay it with "
                          "{} ranks, or the same trace on every rank (a path without {{rank}})",
                          spec.group_size, spec.group_size_from, layout.world_size,
                          spec.group_size)};
}

std::vector<RecordedGroup> groupsToCreate(const core::Graph& graph,
                                          const std::vector<core::NodeId>& ops,
                                          const GroupLayout& layout) {
  std::map<std::string, std::vector<int>> groups;
  for (core::NodeId id : ops) {
    const core::Node& node = graph.node(id);
    if (node.category != core::NodeCategory::kCommunication || !node.comm) continue;
    CollectiveSpec spec;
    try {
      spec = readCollective(node, graph.source_path);
    } catch (const InputError&) {
      continue;
    }
    const GroupChoice choice = chooseGroup(node, spec, layout);
    if (choice.group.empty()) continue;
    const std::vector<int> members = recordedMembers(node);
    auto [it, fresh] = groups.emplace(choice.group, members);
    if (!fresh && it->second != members) {
      throw InputError(fmt::format("{}: node {}: process group '{}' recorded with two different "
                                   "memberships",
                                   graph.source_path, id, choice.group));
    }
  }
  std::vector<RecordedGroup> mine;
  for (auto& [name, ranks] : groups) {
    if (std::find(ranks.begin(), ranks.end(), layout.rank) != ranks.end()) {
      mine.push_back({name, ranks});
    }
  }
  return mine;
}

Splits resplitAllToAll(const CollectiveSpec& spec, int64_t rows, int group_rank, int group_size) {
  const bool fits = (spec.in_split.empty() || int(spec.in_split.size()) == group_size) &&
                    (spec.out_split.empty() || int(spec.out_split.size()) == group_size);
  if (fits || group_size < 1) return {};
  // Every rank replays the same trace here, so every peer holds `rows` rows
  // and sends rank j the j-th share.
  const int64_t base = rows / group_size;
  const int64_t extra = rows % group_size;
  Splits s;
  for (int j = 0; j < group_size; ++j) s.in.push_back(base + (j < extra ? 1 : 0));
  s.out.assign(size_t(group_size), base + (group_rank < extra ? 1 : 0));
  return s;
}

}  // namespace tracetwin::core::comm
