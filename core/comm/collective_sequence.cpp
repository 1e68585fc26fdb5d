#include "core/comm/collective_sequence.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "core/comm/collective_spec.h"
#include "core/comm/recorded_ranks.h"
#include "core/errors.h"

namespace tracetwin::core::comm {
namespace {

int64_t tensorBytes(const core::Node& node) {
  int64_t bytes = 0;
  for (const core::Value& v : node.inputs) {
    core::forEachTensor(v, [&](const core::TensorValue& t) {
      if (t.defined()) bytes += t.numel * t.itemsize;
    });
  }
  return bytes;
}

std::string describe(const CollectiveStep& s) {
  std::string what = s.name;
  if (s.bytes >= 0) what += fmt::format(" of {} bytes", s.bytes);
  what += s.group.empty() ? " on the default group" : " on group '" + s.group + "'";
  return what + fmt::format(" (op {})", s.node);
}

// An all_to_all_single whose splits were not recorded (PyTorch 1.13's Gloo):
// the ranks' send sizes may differ; deriveAllToAllSplits decides.
bool unrecordedSplits(const CollectiveStep& s) {
  return s.name == collectiveInfo(Collective::kAllToAllSingle).name && s.bytes >= 0;
}

bool same(const CollectiveStep& a, const CollectiveStep& b) {
  return a.name == b.name && a.group == b.group &&
         (a.bytes < 0 || b.bytes < 0 || a.bytes == b.bytes ||
          (unrecordedSplits(a) && unrecordedSplits(b)));
}

bool underBackward(const core::Graph& graph, const core::Node& node) {
  core::NodeId p = node.parent;
  for (int depth = 0; p != core::kNoNode && depth < 64; ++depth) {
    const core::Node* n = graph.findNode(p);
    if (n == nullptr || n->parent == p) break;
    if (n->name.find("Backward") != std::string::npos) return true;
    p = n->parent;
  }
  return false;
}

}  // namespace

std::vector<CollectiveStep> collectiveSequence(const core::Graph& graph,
                                               const std::vector<core::NodeId>& ops) {
  std::vector<CollectiveStep> steps;
  for (core::NodeId id : ops) {
    const core::Node& node = graph.node(id);
    if (node.category != core::NodeCategory::kCommunication) continue;
    CollectiveSpec spec;
    try {
      spec = readCollective(node, graph.source_path);
    } catch (const InputError&) {
      continue;  // not replayable; the replay reports it
    }
    if (spec.kind == Collective::kWait) continue;
    CollectiveStep step;
    step.node = id;
    step.name = collectiveInfo(spec.kind).name;
    step.group = node.comm ? node.comm->pg_name : "";
    const bool uneven = spec.kind == Collective::kAllToAllSingle &&
                        (!spec.in_split.empty() || !spec.out_split.empty());
    step.bytes = uneven ? -1 : tensorBytes(node);
    step.backward = underBackward(graph, node);
    step.group_rank = spec.group_rank;
    step.group_size = spec.group_size;
    if (node.comm) {
      step.global_rank_start = node.comm->global_rank_start;
      step.global_rank_stride = node.comm->global_rank_stride;
    }
    step.in_split = spec.in_split;
    step.out_split = spec.out_split;
    steps.push_back(std::move(step));
  }
  return steps;
}

namespace {

// A split list as one word: "-" for none, else "a,b,c".
std::string splitsWord(const std::vector<int64_t>& v) {
  return v.empty() ? "-" : fmt::format("{}", fmt::join(v, ","));
}

bool splitsFromWord(const std::string& word, std::vector<int64_t>& out) {
  out.clear();
  if (word == "-") return true;
  std::istringstream in(word);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    try {
      out.push_back(std::stoll(item, &used));
    } catch (const std::exception&) {
      return false;
    }
    if (used != item.size()) return false;
  }
  return !out.empty();
}

}  // namespace

std::string sequenceToText(const std::vector<CollectiveStep>& steps) {
  std::string out;
  for (const CollectiveStep& s : steps) {
    out +=
        fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", s.node, s.name, s.bytes,
                    s.backward ? 'B' : 'F', s.group_rank, s.group_size, s.global_rank_start,
                    s.global_rank_stride, splitsWord(s.in_split), splitsWord(s.out_split), s.group);
  }
  return out;
}

std::vector<CollectiveStep> sequenceFromText(const std::string& text, const std::string& from) {
  std::vector<CollectiveStep> steps;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    std::istringstream fields(line);
    CollectiveStep s;
    char phase = 0;
    std::string in_split, out_split;
    if (!(fields >> s.node >> s.name >> s.bytes >> phase >> s.group_rank >> s.group_size >>
          s.global_rank_start >> s.global_rank_stride >> in_split >> out_split) ||
        (phase != 'B' && phase != 'F') || !splitsFromWord(in_split, s.in_split) ||
        !splitsFromWord(out_split, s.out_split)) {
      throw InputError(fmt::format(
          "{}: collective sequence line {}: expected 'node name bytes F|B group_rank group_size "
          "start stride in_split out_split [group]', got '{}'",
          from, number, line));
    }
    s.backward = phase == 'B';
    fields.get();  // the tab before the group
    std::getline(fields, s.group);
    steps.push_back(std::move(s));
  }
  return steps;
}

std::string firstSequenceMismatch(const std::vector<std::vector<CollectiveStep>>& by_rank) {
  // Per group: every rank that issues collectives on it must issue the same
  // ones, and on the default group every rank must.
  struct Entry {
    size_t index;  // position in the rank's whole sequence
    const CollectiveStep* step;
  };
  std::map<std::string, std::vector<std::vector<Entry>>> groups;  // group -> rank -> entries
  groups[""].resize(by_rank.size());
  for (size_t r = 0; r < by_rank.size(); ++r) {
    for (size_t i = 0; i < by_rank[r].size(); ++i) {
      auto& per_rank = groups[by_rank[r][i].group];
      per_rank.resize(by_rank.size());
      per_rank[r].push_back({i, &by_rank[r][i]});
    }
  }
  for (const auto& [group, per_rank] : groups) {
    const std::string where = group.empty() ? "the default group" : "group '" + group + "'";
    size_t first = per_rank.size();
    for (size_t r = 0; r < per_rank.size(); ++r) {
      if (group.empty() || !per_rank[r].empty()) {
        first = r;
        break;
      }
    }
    if (first == per_rank.size()) continue;
    const auto& ref = per_rank[first];
    for (size_t r = first + 1; r < per_rank.size(); ++r) {
      const auto& mine = per_rank[r];
      if (!group.empty() && mine.empty()) continue;  // not a member
      const size_t n = std::min(ref.size(), mine.size());
      for (size_t k = 0; k < n; ++k) {
        if (same(*ref[k].step, *mine[k].step)) continue;
        return fmt::format(
            "rank {} differs from rank {} at collective #{} on {}: rank {} issues {}, rank {} "
            "issues {}",
            r, first, k, where, r, describe(*mine[k].step), first, describe(*ref[k].step));
      }
      if (ref.size() != mine.size()) {
        const bool longer = mine.size() > ref.size();
        const auto& extra = longer ? mine[n] : ref[n];
        return fmt::format(
            "rank {} issues {} collectives on {} and rank {} issues {}; the first without a "
            "partner is #{} on rank {}: {}",
            r, mine.size(), where, first, ref.size(), n, longer ? r : first,
            describe(*extra.step));
      }
    }
  }
  return "";
}

std::vector<MatchedCollective> matchAcrossRanks(
    const std::vector<std::vector<CollectiveStep>>& by_rank) {
  if (std::string why = firstSequenceMismatch(by_rank); !why.empty()) {
    throw InputError("the traces are not the ranks of one job: " + why);
  }
  std::vector<MatchedCollective> matched = pairAcrossRanks(by_rank);
  if (std::string why = firstRecordContradiction(matched, by_rank.size()); !why.empty()) {
    throw InputError("the traces are not the ranks of one job: " + why);
  }
  return matched;
}

std::vector<MatchedCollective> pairAcrossRanks(
    const std::vector<std::vector<CollectiveStep>>& by_rank) {
  const int n = int(by_rank.size());
  std::map<std::string, std::vector<int>> members;
  for (int r = 0; r < n; ++r) members[""].push_back(r);
  for (int r = 0; r < n; ++r) {
    std::set<std::string> mine;
    for (const CollectiveStep& s : by_rank[size_t(r)]) mine.insert(s.group);
    for (const std::string& g : mine) {
      if (!g.empty()) members[g].push_back(r);
    }
  }
  std::vector<MatchedCollective> out;
  std::map<std::pair<std::string, int64_t>, size_t> index;  // (group, position) -> out
  for (int r = 0; r < n; ++r) {
    std::map<std::string, int64_t> position;
    const auto& steps = by_rank[size_t(r)];
    for (size_t i = 0; i < steps.size(); ++i) {
      const CollectiveStep& s = steps[i];
      const int64_t k = position[s.group]++;
      auto [it, fresh] = index.try_emplace({s.group, k}, out.size());
      if (fresh) {
        MatchedCollective m;
        m.name = s.name;
        m.group = s.group;
        m.position = k;
        m.members = members[s.group];
        m.steps.resize(m.members.size());
        m.index_in_rank.resize(m.members.size());
        out.push_back(std::move(m));
      }
      MatchedCollective& m = out[it->second];
      const size_t at =
          size_t(std::lower_bound(m.members.begin(), m.members.end(), r) - m.members.begin());
      m.steps[at] = s;
      m.index_in_rank[at] = i;
    }
  }
  return out;
}

std::map<core::NodeId, DerivedSplits> deriveAllToAllSplits(
    const std::vector<std::vector<CollectiveStep>>& by_rank, int rank,
    const std::function<int64_t(core::NodeId node, int64_t bytes)>& elements_of) {
  std::map<core::NodeId, DerivedSplits> out;
  std::map<std::string, std::vector<DerivedSplits>> forwards;  // group -> unpaired forwards
  for (const MatchedCollective& m : matchAcrossRanks(by_rank)) {
    const auto me = std::find(m.members.begin(), m.members.end(), rank);
    if (me == m.members.end()) continue;
    const size_t mine = size_t(me - m.members.begin());
    const CollectiveStep& step = m.steps[mine];
    bool unrecorded = true;
    for (const CollectiveStep& s : m.steps) unrecorded = unrecorded && unrecordedSplits(s);
    if (!unrecorded) continue;
    const int64_t G = int64_t(m.members.size());
    const std::string what = fmt::format(
        "all_to_all_single #{} on {} (op {} on rank {}), recorded without split sizes", m.position,
        m.group.empty() ? "the default group" : "group '" + m.group + "'", step.node, rank);
    DerivedSplits d;
    if (!step.backward) {
      for (size_t k = 0; k < m.steps.size(); ++k) {
        const int64_t n = elements_of(step.node, m.steps[k].bytes);
        if (n % G != 0) {
          throw InputError(fmt::format(
              "{}: rank {} sends {} elements, not a multiple of the group's {} ranks, so its "
              "split sizes cannot be derived (an all_to_allv whose chunks differ per peer)",
              what, m.members[k], n, G));
        }
        d.out_split.push_back(n / G);
      }
      d.in_split.assign(size_t(G), d.out_split[mine]);
      forwards[m.group].push_back(d);
    } else {
      auto& stack = forwards[m.group];
      if (stack.empty()) {
        throw InputError(fmt::format(
            "{}: it runs in autograd's backward, but no forward all_to_all_single on the group "
            "precedes it to take the transpose of",
            what));
      }
      const DerivedSplits fwd = stack.back();
      stack.pop_back();
      d.in_split = fwd.out_split;
      d.out_split = fwd.in_split;
      int64_t sum = 0;
      for (int64_t v : d.in_split) sum += v;
      if (sum != elements_of(step.node, step.bytes)) {
        throw InputError(fmt::format(
            "{}: the transpose of its forward sends {} elements, the trace records {}", what,
            sum, elements_of(step.node, step.bytes)));
      }
    }
    // Even splits are what a replay without splits does already.
    const auto uneven = [](const std::vector<int64_t>& v) {
      return std::adjacent_find(v.begin(), v.end(), std::not_equal_to<>()) != v.end();
    };
    if (uneven(d.in_split) || uneven(d.out_split)) out.emplace(step.node, std::move(d));
  }
  return out;
}

}  // namespace tracetwin::core::comm
