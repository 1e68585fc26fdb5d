#include "predictors/comm/comm_trace_samples.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/comm/collective_sequence.h"
#include "predictors/kernels/features.h"

namespace tracetwin::predictors {
namespace {

// The kernels of one linked op: first start to last end (absolute us).
struct Span {
  bool known = false;
  double start = 0, end = 0;
};

Span spanOf(const core::kineto::LinkedOp& op) {
  Span s;
  for (const auto& k : op.kernels) {
    if (!s.known) {
      s = {true, k.start_us, k.start_us + k.duration_us};
    } else {
      s.start = std::min(s.start, k.start_us);
      s.end = std::max(s.end, k.start_us + k.duration_us);
    }
  }
  return s;
}

}  // namespace

CommTraceSamples commSamplesFromRanks(const std::vector<LinkedRank>& ranks) {
  CommTraceSamples out;
  const size_t n = ranks.size();
  std::vector<std::vector<core::comm::CollectiveStep>> steps(n);
  std::vector<std::unordered_map<core::NodeId, const core::kineto::LinkedOp*>> ops(n);
  for (size_t r = 0; r < n; ++r) {
    std::vector<core::NodeId> ids;
    for (const auto& op : ranks[r].linked->ops) {
      ids.push_back(op.id);
      ops[r][op.id] = &op;
    }
    steps[r] = core::comm::collectiveSequence(*ranks[r].graph, ids);
  }
  const auto matched = core::comm::matchAcrossRanks(steps);
  // Shared clock: a collective's kernels end together on every member (the
  // DLRM ranks' ends agree within 3 us while their starts spread 7.5 ms).
  std::vector<std::vector<Span>> spans;
  bool shared_clock = true;
  for (const auto& mc : matched) {
    std::vector<Span> s;
    for (size_t k = 0; k < mc.members.size(); ++k) {
      auto it = ops[size_t(mc.members[k])].find(mc.steps[k].node);
      s.push_back(it == ops[size_t(mc.members[k])].end() ? Span{} : spanOf(*it->second));
    }
    double lo = 1e300, hi = -1e300, longest = 0;
    bool all = true;
    for (const Span& x : s) {
      all = all && x.known;
      if (!x.known) continue;
      lo = std::min(lo, x.end);
      hi = std::max(hi, x.end);
      longest = std::max(longest, x.end - x.start);
    }
    if (all && hi - lo > std::max(50.0, 0.05 * longest)) shared_clock = false;
    spans.push_back(std::move(s));
  }
  out.last_by = shared_clock ? "start" : "shortest";
  for (size_t c = 0; c < matched.size(); ++c) {
    const auto& mc = matched[c];
    CollectiveSplit split;
    split.name = mc.name;
    split.group = mc.group;
    split.position = mc.position;
    split.members = mc.members;
    split.group_size = int64_t(mc.members.size());
    size_t last = 0;
    bool all = true;
    for (size_t k = 0; k < mc.members.size(); ++k) {
      const Span& x = spans[c][k];
      all = all && x.known;
      split.kernel_us.push_back(x.known ? x.end - x.start : 0.0);
      if (!x.known) continue;
      const Span& best = spans[c][last];
      const bool later = shared_clock ? x.start > best.start
                                      : x.end - x.start < best.end - best.start;
      if (k == 0 || later) last = k;
    }
    if (!all) {
      out.notes.push_back(fmt::format("{} #{}: a member's op has no linked kernel; left out",
                                      mc.name, mc.position));
      continue;
    }
    split.last_rank = mc.members[last];
    split.transfer_us = split.kernel_us[last];
    // Bytes as the predictor reads the op (features.h), on the last rank.
    const core::Graph& g = *ranks[size_t(split.last_rank)].graph;
    split.bytes = computeFeatures(g.node(mc.steps[last].node)).message_bytes;
    out.samples.push_back({split.name, split.group_size, split.bytes, split.transfer_us * 1e-6});
    out.collectives.push_back(std::move(split));
  }
  return out;
}

}  // namespace tracetwin::predictors
