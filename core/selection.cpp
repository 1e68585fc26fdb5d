// Top-level operator selection (DESIGN.md "Operator selection"; the rules of
// Mystique / param et_replay): walk from the root, keep each operator without
// descending into it, descend through labels, skip DataLoader subtrees, and
// keep one iteration when ProfilerStep#N labels mark them.
#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

#include "core/graph.h"

namespace tracetwin::core {
namespace {

bool isProfilerStep(const Node& n) {
  return std::string_view(n.name).substr(0, 13) == "ProfilerStep#";
}

// Sorts ids that arrive as a few ascending runs (the walk's threads) by
// merging the runs: sorting 100k ids from scratch was ~1.5% of a prediction.
void sortRuns(std::vector<NodeId>* ids) {
  constexpr size_t kMostRuns = 16;  // past this, a plain sort
  std::vector<size_t> run_starts;
  for (size_t i = 1; i < ids->size(); ++i) {
    if ((*ids)[i] < (*ids)[i - 1]) run_starts.push_back(i);
    if (run_starts.size() > kMostRuns) {
      std::sort(ids->begin(), ids->end());
      return;
    }
  }
  run_starts.push_back(ids->size());
  for (size_t r = 0; r + 1 < run_starts.size(); ++r) {
    std::inplace_merge(ids->begin(), ids->begin() + static_cast<std::ptrdiff_t>(run_starts[r]),
                       ids->begin() + static_cast<std::ptrdiff_t>(run_starts[r + 1]));
  }
}

}  // namespace

// Data loading is not part of the model's iteration (the DLRM traces have one
// per step, 1.0-1.4 ms of their 12.5-19.9 ms).
bool isDataLoaderLabel(std::string_view name) { return name.find("DataLoader") != name.npos; }

Selection selectTopLevelOps(const Graph& graph) {
  Selection sel;
  std::vector<NodeId> steps;
  for (const Node& n : graph.nodes()) {
    if (n.category == NodeCategory::kLabel && isProfilerStep(n)) steps.push_back(n.id);
  }
  // Ids are assigned on entry, so everything run inside step N has an id
  // between step N's id and step N+1's (nodes() is sorted by id).
  if (steps.size() >= 2) sel.window = std::make_pair(steps[0], steps[1]);

  const Node* root = graph.findNode(graph.rootId());
  if (root == nullptr) return sel;
  // Explicit stack, children pushed in reverse to pop in execution order.
  std::vector<NodeId> stack(root->children.rbegin(), root->children.rend());
  while (!stack.empty()) {
    const Node& n = graph.node(stack.back());
    stack.pop_back();
    if (isOperator(n.category)) {
      if (sel.window && (n.id <= sel.window->first || n.id >= sel.window->second)) continue;
      sel.ops.push_back(n.id);
      sel.comm_ops += n.category == NodeCategory::kCommunication;
      sel.triton_ops += n.category == NodeCategory::kTriton;
      sel.custom_ops += n.category == NodeCategory::kCustom;
      continue;
    }
    if (isDataLoaderLabel(n.name)) {
      if (!sel.window || (n.id > sel.window->first && n.id < sel.window->second))
        sel.data_loaders.push_back(n.id);
      continue;
    }
    stack.insert(stack.end(), n.children.rbegin(), n.children.rend());
  }
  // The walk goes thread by thread; execution order across threads is id
  // order (ids are taken from one process-wide counter on entry).
  sortRuns(&sel.ops);
  std::sort(sel.data_loaders.begin(), sel.data_loaders.end());
  return sel;
}

}  // namespace tracetwin::core
