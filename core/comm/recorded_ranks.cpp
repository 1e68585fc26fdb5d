#include "core/comm/recorded_ranks.h"

#include <fmt/core.h>

#include "core/comm/collective_spec.h"

namespace tracetwin::core::comm {
namespace {

std::string describeCollective(const MatchedCollective& m) {
  return fmt::format("{} #{} on {}", m.name, m.position,
                     m.group.empty() ? "the default group" : "group '" + m.group + "'");
}

std::string wrongRank(const MatchedCollective& m) {
  for (size_t k = 0; k < m.members.size(); ++k) {
    const CollectiveStep& s = m.steps[k];
    if (s.group_rank < 0) continue;
    const int me = m.members[k];
    if (s.global_rank_start >= 0 && s.global_rank_stride >= 1) {
      const int64_t global = s.global_rank_start + s.group_rank * s.global_rank_stride;
      if (global == me) continue;
      return fmt::format(
          "rank {}'s trace records {} (op {}) as rank {} of a group starting at global rank {} "
          "with stride {}, i.e. global rank {}: it is not rank {}'s trace (a copy of another "
          "rank's, or another job's)",
          me, describeCollective(m), s.node, s.group_rank, s.global_rank_start,
          s.global_rank_stride, global, me);
    }
    if (s.group_size != int64_t(m.members.size()) || s.group_rank == int64_t(k)) continue;
    return fmt::format(
        "rank {}'s trace records {} (op {}) as rank {} of its {}-rank group, where rank {} is "
        "group rank {}: it is not rank {}'s trace (a copy of another rank's, or another job's)",
        me, describeCollective(m), s.node, s.group_rank, s.group_size, me, k, me);
  }
  return "";
}

std::string wrongSize(const MatchedCollective& m, size_t rank_count) {
  const int64_t issuing = int64_t(m.members.size());
  for (size_t k = 0; k < m.members.size(); ++k) {
    const CollectiveStep& s = m.steps[k];
    if (s.group_size < 0) continue;
    const bool contradicts = m.group.empty() ? s.group_size > issuing : s.group_size != issuing;
    if (!contradicts) continue;
    return fmt::format(
        "rank {}'s trace records {} (op {}) on a group of {} ranks, but {} of the job's {} "
        "traces issue it{}",
        m.members[k], describeCollective(m), s.node, s.group_size, issuing, rank_count,
        s.group_size > int64_t(rank_count) ? " (the traces of some ranks are missing)" : "");
  }
  return "";
}

bool isAllToAllSingle(const MatchedCollective& m) {
  return m.name == collectiveInfo(Collective::kAllToAllSingle).name;
}

std::string unpairedSplits(const MatchedCollective& m) {
  const size_t g = m.members.size();
  for (const CollectiveStep& s : m.steps) {
    if (s.in_split.size() != g || s.out_split.size() != g) return "";
  }
  for (size_t a = 0; a < g; ++a) {
    for (size_t b = 0; b < g; ++b) {
      const int64_t sent = m.steps[a].in_split[b];
      const int64_t expected = m.steps[b].out_split[a];
      if (sent == expected) continue;
      return fmt::format(
          "{}: rank {} sends {} rows to rank {} (op {}), but rank {} expects {} from rank {} "
          "(op {}): the split sizes do not pair up",
          describeCollective(m), m.members[a], sent, m.members[b], m.steps[a].node, m.members[b],
          expected, m.members[a], m.steps[b].node);
    }
  }
  return "";
}

}  // namespace

std::string firstRecordContradiction(const std::vector<MatchedCollective>& matched,
                                     size_t rank_count) {
  for (const MatchedCollective& m : matched) {
    if (std::string why = wrongRank(m); !why.empty()) return why;
  }
  for (const MatchedCollective& m : matched) {
    if (std::string why = wrongSize(m, rank_count); !why.empty()) return why;
  }
  for (const MatchedCollective& m : matched) {
    if (!isAllToAllSingle(m)) continue;
    if (std::string why = unpairedSplits(m); !why.empty()) return why;
  }
  return "";
}

}  // namespace tracetwin::core::comm
