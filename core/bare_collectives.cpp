// Collectives that PyTorch recorded without record_param_comms. PyTorch 1.13
// (schema 1.0.1, what Debian's PyTorch writes here) records a c10d dispatcher
// op (`c10d::allreduce_` over a GenericList and the process group as
// "<Object>") with a `gloo:all_reduce` / `nccl:all_reduce` label inside, and
// for some collectives only the label: `all_to_all_single` on Gloo leaves a
// bare `gloo:all_to_all` with its input tensor. The Mystique rules treat
// c10d:: ops as labels because newer traces put record_param_comms inside
// them; where no record_param_comms is there, the outermost of these nodes
// is the collective, or it would not be replayed or predicted at all.
//
// Gloo runs a collective's work on its own thread, so the label of an async
// collective is often not inside its c10d op but its next sibling (rank 0 of
// a 2-rank capture here: `c10d::allgather_` id 251, then `gloo:all_gather`
// id 252 under the thread node; rank 1 nested them). Such a label is the
// work of the c10d op before it, not another collective: each c10d op
// without a label inside takes the first free label after it.
#include <algorithm>
#include <deque>
#include <string_view>

#include "core/graph.h"
#include "core/text.h"

namespace tracetwin::core {
namespace {

using text::startsWith;

bool isBackendLabel(std::string_view name) {
  return startsWith(name, "gloo:") || startsWith(name, "nccl:");
}

}  // namespace

void Graph::promoteBareCollectives() {
  // Two walks over the linked children with explicit stacks (a fuzzed trace
  // can nest a million deep). First, children before parents: does a
  // subtree hold a record_param_comms?
  const auto candidate = [](const Node& node) {
    return node.category == NodeCategory::kLabel &&
           (startsWith(node.name, "c10d::") || isBackendLabel(node.name));
  };
  if (std::none_of(nodes_.begin(), nodes_.end(), candidate)) return;  // most traces: one pass
  const size_t n = nodes_.size();
  std::vector<uint8_t> holds_record(n, 0);
  std::vector<uint8_t> holds_label(n, 0);  // a backend label below (not counting itself)
  std::vector<std::pair<size_t, bool>> stack{{index_.find(root_), false}};
  while (!stack.empty()) {
    auto [i, done] = stack.back();
    stack.pop_back();
    if (done) {
      if (nodes_[i].category == NodeCategory::kCommunication) holds_record[i] = 1;
      for (NodeId c : nodes_[i].children) {
        const size_t k = index_.find(c);
        holds_record[i] |= holds_record[k];
        holds_label[i] |= holds_label[k] | uint8_t(isBackendLabel(nodes_[k].name));
      }
      continue;
    }
    stack.emplace_back(i, true);
    for (NodeId c : nodes_[i].children) stack.emplace_back(index_.find(c), false);
  }
  // Parents first: the outermost c10d:: op or backend label with no
  // record_param_comms below becomes the collective; below a collective
  // nothing is promoted.
  std::vector<size_t> todo{index_.find(root_)};
  while (!todo.empty()) {
    const size_t i = todo.back();
    todo.pop_back();
    Node& node = nodes_[i];
    if (node.category == NodeCategory::kCommunication) continue;
    if (candidate(node) && !holds_record[i]) {
      node.category = NodeCategory::kCommunication;
      continue;
    }
    for (NodeId c : node.children) todo.push_back(index_.find(c));
  }
  // In execution (id) order: a promoted label right after a c10d op whose
  // own label is missing is that op's work.
  std::deque<size_t> waiting_for_label;
  for (size_t i = 0; i < n; ++i) {
    Node& node = nodes_[i];
    if (node.category != NodeCategory::kCommunication) continue;
    if (startsWith(node.name, "c10d::")) {
      if (!holds_label[i]) waiting_for_label.push_back(i);
    } else if (isBackendLabel(node.name) && !waiting_for_label.empty()) {
      waiting_for_label.pop_front();
      node.category = NodeCategory::kLabel;
    }
  }
}

}  // namespace tracetwin::core
