#include "core/kineto/linker.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "core/errors.h"
#include "core/kineto/kernel_attribution.h"
#include "core/kineto/sequence_alignment.h"
#include "core/kineto/trace_index.h"

namespace tracetwin::core::kineto {
namespace {

// Every ET node but the process and thread roots, grouped by ET thread, in
// id (= entry) order.
std::map<int64_t, std::vector<const Node*>> etThreads(const Graph& graph) {
  std::set<NodeId> roots{graph.rootId()};
  for (NodeId id : graph.threadRoots()) roots.insert(id);
  std::map<int64_t, std::vector<const Node*>> threads;
  for (const Node& node : graph.nodes()) {
    if (!roots.count(node.id)) threads[node.tid].push_back(&node);
  }
  return threads;
}

int64_t histogramOverlap(const std::unordered_map<std::string_view, int64_t>& a,
                         const std::unordered_map<std::string_view, int64_t>& b) {
  int64_t overlap = 0;
  for (const auto& [name, count] : a) {
    auto it = b.find(name);
    if (it != b.end()) overlap += std::min(count, it->second);
  }
  return overlap;
}

// ET thread -> Kineto thread, one to one, greedily by how many op names the
// two threads share (ET tids are small indices, Kineto tids are OS ids).
std::map<int64_t, int64_t> mapThreads(const std::map<int64_t, std::vector<const Node*>>& et,
                                      const KinetoTrace& trace, const TraceIndex& index) {
  std::map<int64_t, std::unordered_map<std::string_view, int64_t>> et_hist, k_hist;
  for (const auto& [tid, nodes] : et)
    for (const Node* n : nodes) ++et_hist[tid][n->name];
  for (const auto& [tid, list] : index.cpu_by_tid)
    for (size_t i : list) ++k_hist[tid][trace.events[i].name];
  std::vector<std::tuple<int64_t, int64_t, int64_t>> candidates;  // score, et, kineto
  for (const auto& [et_tid, eh] : et_hist)
    for (const auto& [k_tid, kh] : k_hist) {
      int64_t score = histogramOverlap(eh, kh);
      if (score > 0) candidates.emplace_back(score, et_tid, k_tid);
    }
  std::sort(candidates.rbegin(), candidates.rend());
  std::map<int64_t, int64_t> mapping;
  std::set<int64_t> used;
  for (const auto& [score, et_tid, k_tid] : candidates) {
    if (mapping.count(et_tid) || used.count(k_tid)) continue;
    mapping[et_tid] = k_tid;
    used.insert(k_tid);
  }
  return mapping;
}

// ET seq_id and Kineto "Sequence number" come from the same autograd
// counter, but the two traces may record different iterations of the same
// loop (the DLRM pairs: every ET seq_id is the Kineto number minus 40). Each
// (ET op, Kineto op) pair with the same name votes for its difference; the
// offset with the most votes wins, ties going to the smallest |offset| (a
// Kineto trace of 40 identical iterations gives 40 equal winners, and 0 -
// the very iteration the ET recorded - is the right one). Without a clear
// winner (fewer votes than half the ET ops that carry a number) the numbers
// are not used at all.
std::optional<int64_t> sequenceOffset(const std::vector<const Node*>& et_nodes,
                                      const std::vector<size_t>& k_list, const KinetoTrace& trace) {
  std::unordered_map<std::string_view, std::vector<int64_t>> et_seqs, k_seqs;
  int64_t et_numbered = 0;
  for (const Node* n : et_nodes)
    if (n->seq_id >= 0) et_seqs[n->name].push_back(n->seq_id), ++et_numbered;
  for (size_t i : k_list) {
    const KinetoEvent& e = trace.events[i];
    if (e.sequence_number >= 0 && et_seqs.count(e.name))
      k_seqs[e.name].push_back(e.sequence_number);
  }
  std::unordered_map<int64_t, int64_t> votes;
  for (const auto& [name, ks] : k_seqs)
    for (int64_t es : et_seqs[name])
      for (int64_t k : ks) ++votes[k - es];
  std::optional<int64_t> best;
  int64_t best_votes = 0;
  for (const auto& [offset, count] : votes) {
    bool better = count > best_votes ||
                  (count == best_votes && best && std::llabs(offset) < std::llabs(*best));
    if (better) best = offset, best_votes = count;
  }
  if (!best || 2 * best_votes < et_numbered) return std::nullopt;
  return best;
}

// Narrows the Kineto side to the events around those sharing a sequence
// number with the ET thread (the ET records one iteration, the Kineto trace
// may hold forty): [first - n, last + n] where n = ET ops on the thread.
std::pair<size_t, size_t> sequenceWindow(const std::vector<AlignItem>& et_items,
                                         const std::vector<size_t>& k_list,
                                         const KinetoTrace& trace) {
  std::unordered_set<int64_t> seqs;
  for (const AlignItem& item : et_items)
    if (item.sequence >= 0) seqs.insert(item.sequence);
  size_t lo = k_list.size(), hi = 0;
  for (size_t j = 0; j < k_list.size(); ++j) {
    const KinetoEvent& e = trace.events[k_list[j]];
    if (e.sequence_number >= 0 && seqs.count(e.sequence_number)) {
      lo = std::min(lo, j);
      hi = std::max(hi, j);
    }
  }
  if (lo > hi) return {0, k_list.size()};
  size_t margin = et_items.size();
  return {lo > margin ? lo - margin : 0, std::min(k_list.size(), hi + margin + 1)};
}

void matchByAlignment(const std::map<int64_t, std::vector<const Node*>>& et,
                      const KinetoTrace& trace, const TraceIndex& index, NodeMatch& match,
                      std::vector<ThreadLink>& threads) {
  auto mapping = mapThreads(et, trace, index);
  for (const auto& [et_tid, nodes] : et) {
    ThreadLink link{et_tid, kAbsent, static_cast<int64_t>(nodes.size()), 0};
    auto it = mapping.find(et_tid);
    if (it != mapping.end()) {
      link.kineto_tid = it->second;
      const auto& k_list = index.cpu_by_tid.at(it->second);
      std::optional<int64_t> offset = sequenceOffset(nodes, k_list, trace);
      std::vector<AlignItem> a, b;
      a.reserve(nodes.size());
      for (const Node* n : nodes)
        a.push_back({n->name, offset && n->seq_id >= 0 ? n->seq_id + *offset : -1});
      link.sequence_offset = offset ? *offset : 0;
      link.uses_sequence_numbers = offset.has_value();
      auto [begin, end] = sequenceWindow(a, k_list, trace);
      for (size_t j = begin; j < end; ++j) {
        const KinetoEvent& e = trace.events[k_list[j]];
        b.push_back({e.name, offset ? e.sequence_number : -1});
      }
      auto partner = alignSequences(
          a, b, AlignmentOptions{},
          fmt::format("{} thread {} vs {} thread {}", "ET", et_tid, trace.source_path, it->second));
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (partner[i] < 0) continue;
        match[nodes[i]->id] = k_list[begin + static_cast<size_t>(partner[i])];
        ++link.matched_nodes;
      }
    }
    threads.push_back(link);
  }
}

void matchByRecordFunctionId(const std::map<int64_t, std::vector<const Node*>>& et,
                             const KinetoTrace& trace, const TraceIndex& index, NodeMatch& match,
                             std::vector<ThreadLink>& threads) {
  std::unordered_map<int64_t, size_t> by_rf;
  for (const auto& [tid, list] : index.cpu_by_tid)
    for (size_t i : list)
      if (trace.events[i].record_function_id >= 0)
        by_rf.emplace(trace.events[i].record_function_id, i);
  for (const auto& [et_tid, nodes] : et) {
    ThreadLink link{et_tid, kAbsent, static_cast<int64_t>(nodes.size()), 0};
    for (const Node* n : nodes) {
      auto it = by_rf.find(n->rf_id);
      if (n->rf_id < 0 || it == by_rf.end() || trace.events[it->second].name != n->name) continue;
      match[n->id] = it->second;
      link.kineto_tid = trace.events[it->second].tid;
      ++link.matched_nodes;
    }
    threads.push_back(link);
  }
}

bool hasRecordFunctionIds(const KinetoTrace& trace) {
  return std::any_of(trace.events.begin(), trace.events.end(), [](const KinetoEvent& e) {
    return e.category == EventCategory::kCpuOp && e.record_function_id >= 0;
  });
}

void findIteration(const KinetoTrace& trace, const TraceIndex& index, LinkedTimeline& out) {
  double lo = 0, hi = 0;
  bool any = false;
  for (const LinkedOp& op : out.ops) {
    if (!op.matched) continue;
    double end = op.start_us + op.duration_us;
    for (const LinkedKernel& k : op.kernels) end = std::max(end, k.start_us + k.duration_us);
    lo = any ? std::min(lo, op.start_us) : op.start_us;
    hi = any ? std::max(hi, end) : end;
    any = true;
  }
  for (const LabelKernels& label : out.labels)
    for (const LinkedKernel& k : label.kernels) hi = std::max(hi, k.start_us + k.duration_us);
  out.iteration_source = "traced span";
  out.iteration_start_us = lo;
  out.iteration_end_us = hi;
  // A ProfilerStep#N annotation holding more than half the linked ops wins.
  for (const auto& [tid, list] : index.cpu_by_tid) {
    for (size_t i : list) {
      const KinetoEvent& e = trace.events[i];
      if (e.name.rfind("ProfilerStep#", 0) != 0) continue;
      int64_t inside = 0;
      for (const LinkedOp& op : out.ops)
        inside += op.matched && op.start_us >= e.ts && op.start_us <= e.end();
      if (2 * inside > out.matched_ops) {
        out.iteration_source = e.name;
        out.iteration_start_us = e.ts;
        out.iteration_end_us = e.end();
      }
    }
  }
  out.iteration_ms = (out.iteration_end_us - out.iteration_start_us) / 1000.0;
}

int64_t matchedNodes(const std::vector<ThreadLink>& threads) {
  int64_t n = 0;
  for (const ThreadLink& t : threads) n += t.matched_nodes;
  return n;
}

int64_t totalNodes(const std::vector<ThreadLink>& threads) {
  int64_t n = 0;
  for (const ThreadLink& t : threads) n += t.et_nodes;
  return n;
}

// The ET and the profiler trace of one capture are written by one process:
// every stored pair (72, data/ and the shared traces) has the ET's pid on
// the profiler's ops. A pair from two runs linked a few ops by name and was
// fed to fit, predict --kernel-times and replay --kineto as if it were one
// (a bad-input hunt: 9 of 88 ops linked, exit 0 everywhere).
void checkSameProcess(const Graph& graph, const KinetoTrace& trace) {
  if (graph.pid <= 0) return;  // not recorded: nothing to compare
  std::set<int64_t> op_pids;
  for (const KinetoEvent& e : trace.events) {
    if (e.category == EventCategory::kCpuOp && e.pid >= 0) op_pids.insert(e.pid);
  }
  if (op_pids.empty() || op_pids.count(graph.pid) > 0) return;
  throw InputError(fmt::format(
      "{}: its ops ran in process {}, and the ET {} was recorded by process {}: the two "
      "traces come from different runs (pass the profiler trace written with this ET)",
      trace.source_path, *op_pids.begin(), graph.source_path, graph.pid));
}

}  // namespace

LinkedTimeline linkTraces(const Graph& graph, const KinetoTrace& trace,
                          const LinkOptions& options) {
  checkSameProcess(graph, trace);
  LinkedTimeline out;
  out.et_source = graph.source_path;
  out.kineto_source = trace.source_path;
  if (trace.distributed) out.rank = trace.distributed->rank;
  TraceIndex index = buildTraceIndex(trace);
  out.unlaunched_activities = index.orphan_activities;
  out.activities = static_cast<int64_t>(index.activities.size());
  auto et = etThreads(graph);
  NodeMatch match;
  if (!options.force_alignment && hasRecordFunctionIds(trace)) {
    out.method = "record_function_id";
    matchByRecordFunctionId(et, trace, index, match, out.threads);
    // Record function ids only pair up when the ET and the Kineto trace
    // observed the same step. capture.py records them in two steps, and then
    // the profiler writes "Record function id": 0 for every op (PyTorch 2.11
    // on the H100: 0 of 65 ops linked). Name alignment is the fallback when
    // it links more.
    const int64_t by_id = matchedNodes(out.threads);
    if (2 * by_id < totalNodes(out.threads)) {
      NodeMatch aligned;
      std::vector<ThreadLink> aligned_threads;
      matchByAlignment(et, trace, index, aligned, aligned_threads);
      if (matchedNodes(aligned_threads) > by_id) {
        out.method = fmt::format("name_alignment (record function ids linked {} of {} nodes)",
                                 by_id, totalNodes(out.threads));
        match = std::move(aligned);
        out.threads = std::move(aligned_threads);
      }
    }
  } else {
    out.method = "name_alignment";
    matchByAlignment(et, trace, index, match, out.threads);
  }
  for (const ThreadLink& t : out.threads) {
    out.all_nodes += t.et_nodes;
    out.all_nodes_matched += t.matched_nodes;
  }
  Selection selection = selectTopLevelOps(graph);
  for (NodeId id : selection.ops) {
    const Node& node = graph.node(id);
    LinkedOp op;
    op.id = id;
    op.name = node.name;
    op.et_tid = node.tid;
    auto it = match.find(id);
    if (it != match.end()) {
      const KinetoEvent& e = trace.events[it->second];
      op.matched = true;
      op.kineto_tid = e.tid;
      op.event = static_cast<int64_t>(it->second);
      op.start_us = e.ts;
      op.duration_us = e.dur;
      ++out.matched_ops;
    }
    out.ops.push_back(std::move(op));
  }
  out.top_level_ops = static_cast<int64_t>(out.ops.size());
  out.match_rate = out.top_level_ops ? double(out.matched_ops) / double(out.top_level_ops) : 0.0;
  if (out.top_level_ops > 0 && out.matched_ops == 0) {
    throw InputError(fmt::format(
        "{}: none of the {} top-level ops of the ET {} is in this Kineto trace ({} events): it is "
        "not a profile of the ET's run (pass the profiler trace written with it)",
        trace.source_path, out.top_level_ops, graph.source_path, trace.events.size()));
  }
  attributeKernels(graph, trace, index, match, out);
  findIteration(trace, index, out);
  return out;
}

std::string weakLinkWarning(const LinkedTimeline& timeline) {
  if (timeline.top_level_ops == 0 || timeline.match_rate >= kWeakLinkShare) return "";
  return fmt::format(
      "warning: only {} of the ET's {} top-level ops ({:.1f}%) are in the Kineto trace {}: it is "
      "most likely of another run or step, and the times read from it are not this ET's",
      timeline.matched_ops, timeline.top_level_ops, 100.0 * timeline.match_rate,
      timeline.kineto_source);
}

}  // namespace tracetwin::core::kineto
