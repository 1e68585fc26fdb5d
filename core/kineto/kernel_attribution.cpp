#include "core/kineto/kernel_attribution.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

namespace tracetwin::core::kineto {
namespace {

struct Span {
  double start = 0, end = 0;
  size_t slot = 0;  // index into out.ops, or into the label list
};

LinkedKernel toKernel(const KinetoEvent& e, const KinetoEvent& launch) {
  return {e.name, e.category, e.stream, e.device, e.ts, e.dur, e.correlation, launch.name};
}

// Top-level ops of one thread do not overlap, so the last op starting at or
// before the launch is the only candidate.
const Span* enclosingOp(const std::vector<Span>& ops, double ts) {
  auto pos = std::upper_bound(ops.begin(), ops.end(), ts,
                              [](double t, const Span& s) { return t < s.start; });
  if (pos == ops.begin()) return nullptr;
  const Span& s = *std::prev(pos);
  return ts <= s.end ? &s : nullptr;
}

// Labels nest; the innermost enclosing one starts last.
const Span* enclosingLabel(const std::vector<Span>& labels, double ts) {
  const Span* best = nullptr;
  for (const Span& s : labels)
    if (s.start <= ts && ts <= s.end && (!best || s.start >= best->start)) best = &s;
  return best;
}

}  // namespace

void attributeKernels(const Graph& graph, const KinetoTrace& trace, const TraceIndex& index,
                      const NodeMatch& match, LinkedTimeline& out) {
  std::map<int64_t, std::vector<Span>> ops_by_tid, labels_by_tid;
  double window_lo = 0, window_hi = 0;
  bool any = false;
  for (size_t k = 0; k < out.ops.size(); ++k) {
    const LinkedOp& op = out.ops[k];
    if (!op.matched) continue;
    double end = op.start_us + op.duration_us;
    ops_by_tid[op.kineto_tid].push_back({op.start_us, end, k});
    window_lo = any ? std::min(window_lo, op.start_us) : op.start_us;
    window_hi = any ? std::max(window_hi, end) : end;
    any = true;
  }
  if (!any) return;
  for (auto& [tid, list] : ops_by_tid)
    std::sort(list.begin(), list.end(),
              [](const Span& a, const Span& b) { return a.start < b.start; });
  std::vector<const Node*> label_nodes;
  for (const auto& [id, event] : match) {
    const Node* node = graph.findNode(id);
    if (!node || node->category != NodeCategory::kLabel) continue;
    const KinetoEvent& e = trace.events[event];
    labels_by_tid[e.tid].push_back({e.ts, e.end(), label_nodes.size()});
    label_nodes.push_back(node);
  }
  std::map<size_t, LabelKernels> labels;  // by index into label_nodes
  std::set<int64_t> streams;
  for (const auto& [launch, activities] : index.activities_by_launch) {
    const KinetoEvent& l = trace.events[launch];
    if (l.ts < window_lo || l.ts > window_hi) continue;
    out.kernels += static_cast<int64_t>(activities.size());
    const Span* op = enclosingOp(ops_by_tid[l.tid], l.ts);
    const Span* label = op ? nullptr : enclosingLabel(labels_by_tid[l.tid], l.ts);
    if (!op && !label) continue;
    for (size_t a : activities) {
      const KinetoEvent& e = trace.events[a];
      streams.insert(e.stream);
      ++out.kernels_matched;
      if (op) {
        out.ops[op->slot].kernels.push_back(toKernel(e, l));
        out.ops[op->slot].device_us += e.dur;
        ++out.kernels_in_ops;
      } else {
        LabelKernels& lk = labels[label->slot];
        lk.kernels.push_back(toKernel(e, l));
        lk.device_us += e.dur;
        ++out.kernels_in_labels;
      }
    }
  }
  auto byCorrelation = [](const LinkedKernel& a, const LinkedKernel& b) {
    return a.correlation < b.correlation;
  };
  for (LinkedOp& op : out.ops) std::sort(op.kernels.begin(), op.kernels.end(), byCorrelation);
  for (auto& [slot, lk] : labels) {
    lk.id = label_nodes[slot]->id;
    lk.name = label_nodes[slot]->name;
    lk.kineto_tid = trace.events[match.at(lk.id)].tid;
    std::sort(lk.kernels.begin(), lk.kernels.end(), byCorrelation);
    out.labels.push_back(std::move(lk));
  }
  out.streams.assign(streams.begin(), streams.end());
}

}  // namespace tracetwin::core::kineto
