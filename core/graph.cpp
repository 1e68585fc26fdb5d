#include "core/graph.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <future>
#include <iterator>
#include <string_view>
#include <system_error>

#include "core/errors.h"
#include "core/tensor_id_index.h"
#include "core/text.h"
#include "core/usable_cores.h"

namespace tracetwin::core {
namespace {

// "[pytorch|profiler|execution_trace|process]" (legacy "execution_graph").
bool isProcessNodeName(const std::string& name) {
  return text::startsWithShort(name, "[pytorch|profiler|") && text::endsWith(name, "|process]");
}

// From this many nodes finalize builds the tensor table on a second thread:
// below it, starting one (~50 us) costs about what the overlap saves.
constexpr size_t kConcurrentTensorTableMinNodes = 4096;

// Observer ids are dense (every recorded op takes the next one), so the order
// comes from one pass over a table indexed by id. Empty when the ids are too
// sparse for that or repeat (the sort then handles it and finalize reports
// the duplicate).
std::vector<uint32_t> denseIdOrder(const std::vector<Node>& nodes) {
  const auto [lo, hi] = std::minmax_element(
      nodes.begin(), nodes.end(), [](const Node& a, const Node& b) { return a.id < b.id; });
  const uint64_t range = static_cast<uint64_t>(hi->id) - static_cast<uint64_t>(lo->id) + 1;
  if (range == 0 || range > 4 * static_cast<uint64_t>(nodes.size()) + 64) return {};
  std::vector<uint32_t> slot(range, UINT32_MAX);
  for (size_t i = 0; i < nodes.size(); ++i) {
    uint32_t& s = slot[static_cast<uint64_t>(nodes[i].id) - static_cast<uint64_t>(lo->id)];
    if (s != UINT32_MAX) return {};
    s = static_cast<uint32_t>(i);
  }
  std::vector<uint32_t> order;
  order.reserve(nodes.size());
  for (uint32_t s : slot) {
    if (s != UINT32_MAX) order.push_back(s);
  }
  return order;
}

}  // namespace

const char* nodeCategoryName(NodeCategory category) {
  static constexpr std::array<const char*, 5> kNames{"label", "aten", "comm", "triton", "custom"};
  return kNames[static_cast<size_t>(category)];
}

NodeCategory classifyNode(const Node& node) {
  // Mystique/param rules: record_param_comms is the collective itself; the
  // c10d:: nodes wrap it (they carry a schema but are labels, else every
  // collective would be counted twice).
  // (string_view: compares lengths first, no strlen/memcmp call per node.)
  if (std::string_view(node.name) == "record_param_comms") return NodeCategory::kCommunication;
  if (std::string_view(node.kernel_backend) == "triton") return NodeCategory::kTriton;
  if (node.op_schema_text.empty() || text::startsWithShort(node.name, "c10d::"))
    return NodeCategory::kLabel;
  const bool aten = node.schema ? (std::string_view(node.schema->ns) == "aten" ||
                                   std::string_view(node.schema->ns) == "prims")
                                : (text::startsWithShort(node.op_schema_text, "aten::") ||
                                   text::startsWithShort(node.op_schema_text, "prims::"));
  return aten ? NodeCategory::kAtenCompute : NodeCategory::kCustom;
}

const Node* Graph::findNode(NodeId id) const {
  const size_t i = index_.find(id);
  return i == detail::NodeIndex::kAbsent ? nullptr : &nodes_[i];
}

const Node& Graph::node(NodeId id) const {
  const Node* n = findNode(id);
  if (n == nullptr) throw InputError(fmt::format("{}: no node with id {}", source_path, id));
  return *n;
}

std::vector<NodeId> Graph::threadRoots() const {
  const Node* root = findNode(root_);
  return root == nullptr ? std::vector<NodeId>{} : root->children;
}

void Graph::addNode(Node node) { nodes_.push_back(std::move(node)); }

void Graph::finalize() {
  sortNodesById();
  // The tensor table reads only the nodes' ids and values, which no step
  // below writes: on a big graph it is built on a second core while the
  // structure is indexed, linked and checked (on a 27 MB trace, ~10 and
  // ~14 ms of a ~25 ms tail that the reader's threads cannot share).
  // If a step throws, the future's destructor waits for the table.
  std::future<void> tensors;
  if (nodes_.size() >= kConcurrentTensorTableMinNodes && detail::usableCores() > 1) {
    try {
      tensors = std::async(std::launch::async, [this] { buildTensorTable(); });
    } catch (const std::system_error&) {
      // No thread to be had: built below, on this one.
    }
  }
  index_.reset(nodes_.empty() ? 0 : nodes_.front().id, nodes_.empty() ? 0 : nodes_.back().id,
               nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (i > 0 && nodes_[i].id == nodes_[i - 1].id) {
      throw InputError(fmt::format("{}: node id {} appears twice", source_path, nodes_[i].id));
    }
    index_.insert(nodes_[i].id, i);
  }
  findRoot();
  linkChildren();
  checkAcyclic();
  parseSchemas();
  escapeControlCharactersInNames();
  noteNamesThatAreNotTheirSchemas();
  for (Node& n : nodes_) n.category = classifyNode(n);
  promoteBareCollectives();
  if (tensors.valid()) {
    tensors.get();
  } else {
    buildTensorTable();
  }
}

void Graph::appendNodes(Graph&& batch) {
  nodes_.insert(nodes_.end(), std::make_move_iterator(batch.nodes_.begin()),
                std::make_move_iterator(batch.nodes_.end()));
  batch.nodes_.clear();
}

void Graph::reserveNodes(size_t n) {
  if (n <= nodes_.capacity()) return;
  nodes_.reserve(n);
}

// Nodes are written on exit, children before parents. The permutation is
// applied in place, cycle by cycle: each Node moves once and no second
// ~700-byte-per-node array is needed (that would be ~0.75x the JSON in RSS).
void Graph::sortNodesById() {
  const auto by_id = [](const Node& a, const Node& b) { return a.id < b.id; };
  if (std::is_sorted(nodes_.begin(), nodes_.end(), by_id)) return;
  std::vector<uint32_t> order = denseIdOrder(nodes_);
  if (order.empty()) {
    // Sort (id, position) pairs: contiguous, no chasing into the Nodes.
    std::vector<std::pair<NodeId, uint32_t>> keyed(nodes_.size());
    for (size_t i = 0; i < keyed.size(); ++i) keyed[i] = {nodes_[i].id, static_cast<uint32_t>(i)};
    std::sort(keyed.begin(), keyed.end());
    order.resize(nodes_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = keyed[i].second;
  }
  // Position i must receive nodes_[order[i]].
  for (size_t start = 0; start < order.size(); ++start) {
    if (order[start] == start) continue;
    Node held = std::move(nodes_[start]);
    size_t at = start;
    while (order[at] != start) {
      const size_t from = order[at];
      nodes_[at] = std::move(nodes_[from]);
      order[at] = static_cast<uint32_t>(at);
      at = from;
    }
    nodes_[at] = std::move(held);
    order[at] = static_cast<uint32_t>(at);
  }
}

// The root is its own parent: id 1, "[pytorch|profiler|execution_trace|process]".
void Graph::findRoot() {
  root_ = kNoNode;
  for (const Node& n : nodes_) {
    const bool self_parented = n.parent == n.id;
    const bool orphan_process = isProcessNodeName(n.name) && n.parent == kNoNode;
    if (!self_parented && !orphan_process) continue;
    if (root_ != kNoNode) {
      throw InputError(
          fmt::format("{}: node {} is its own parent but node {} is already the root; expected one "
                      "process node",
                      source_path, n.id, root_));
    }
    root_ = n.id;
  }
  if (root_ == kNoNode) {
    throw InputError(
        fmt::format("{}: no root node; expected a process node that is its own parent (id 1, "
                    "\"[pytorch|profiler|execution_trace|process]\")",
                    source_path));
  }
}

void Graph::linkChildren() {
  // Counted first, so each list is allocated once at its size: grown by
  // push_back, 16k of a 27 MB trace's 29k lists reallocated (and kept up to
  // 2x their size).
  std::vector<size_t> parent_of(nodes_.size(), detail::NodeIndex::kAbsent);
  std::vector<uint32_t> count(nodes_.size(), 0);
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    if (n.id == root_) continue;
    const size_t parent = index_.find(n.parent);
    if (parent == detail::NodeIndex::kAbsent) {
      throw InputError(fmt::format("{}: node {} (\"{}\") has parent {} which is not in the trace",
                                   source_path, n.id, n.name, n.parent));
    }
    parent_of[i] = parent;
    ++count[parent];
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    nodes_[i].children.clear();
    nodes_[i].children.reserve(count[i]);
  }
  // nodes_ is sorted by id, so children come out in ascending id order.
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (parent_of[i] == detail::NodeIndex::kAbsent) continue;
    nodes_[parent_of[i]].children.push_back(nodes_[i].id);
  }
}

// Every parent chain must end at the root. Iterative with memo: linear time,
// no recursion (a fuzzed trace can have a chain a million nodes deep).
void Graph::checkAcyclic() const {
  enum : uint8_t { kUnseen, kOnPath, kReachesRoot };
  std::vector<uint8_t> state(nodes_.size(), kUnseen);
  state[index_.find(root_)] = kReachesRoot;
  std::vector<size_t> path;
  for (size_t start = 0; start < nodes_.size(); ++start) {
    size_t i = start;
    while (state[i] == kUnseen) {
      state[i] = kOnPath;
      path.push_back(i);
      i = index_.find(nodes_[i].parent);  // present: linkChildren checked it
    }
    if (state[i] == kOnPath) {
      throw InputError(
          fmt::format("{}: parent cycle through node {} (\"{}\"); expected every "
                      "parent chain to end at the root {}",
                      source_path, nodes_[i].id, nodes_[i].name, root_));
    }
    for (size_t p : path) state[p] = kReachesRoot;
    path.clear();
  }
}

// A schema the parser cannot read is not fatal: the node keeps its text and
// category, replay reports the op; the count goes into warnings.
void Graph::parseSchemas() {
  // Keyed by views of the nodes' own text (stable during finalize): one
  // parse per distinct schema, no key copies.
  std::unordered_map<std::string_view, std::shared_ptr<const OpSchema>> cache;
  size_t bad = 0;
  std::string first_bad;
  for (Node& n : nodes_) {
    if (n.op_schema_text.empty() || n.schema) continue;
    auto [it, inserted] = cache.try_emplace(n.op_schema_text);
    if (inserted) {
      try {
        it->second = std::make_shared<const OpSchema>(
            parseOpSchema(n.op_schema_text, fmt::format("{}: node {}", source_path, n.id)));
      } catch (const InputError& e) {
        if (bad == 0) first_bad = e.what();
        ++bad;
      }
    }
    n.schema = it->second;
  }
  if (bad > 0) {
    warnings.push_back(
        fmt::format("{} op_schema strings could not be parsed; first: {}", bad, first_bad));
  }
}

// A node's name is its op_schema's operator in every one of the 102,578
// nodes with a schema of the shared traces and data/: one that is not was
// edited or damaged, and the paths would part (replay calls the schema's
// operator; the predictor, reports and families go by the name).
void Graph::noteNamesThatAreNotTheirSchemas() {
  size_t count = 0;
  const Node* first = nullptr;
  for (const Node& n : nodes_) {
    if (!n.schema) continue;
    const std::string_view name = n.name.view();
    const std::string& ns = n.schema->ns;
    const std::string& op = n.schema->name;
    const bool same = name.size() == ns.size() + 2 + op.size() && name.substr(0, ns.size()) == ns &&
                      name.substr(ns.size(), 2) == "::" && name.substr(ns.size() + 2) == op;
    if (same) continue;
    if (count++ == 0) first = &n;
  }
  if (count > 0) {
    warnings.push_back(fmt::format(
        "{} node(s) named otherwise than their op_schema's operator (first: node {} '{}' with "
        "op_schema '{}'): replay calls the schema's operator, predictions go by the name",
        count, first->id, first->name.str(), first->schema->qualifiedName()));
  }
}

// No operator or record_function label of the shared traces and data/ has
// a control character in its name; one that does (an edited or damaged
// trace) was printed raw by every text report, and "\x1b[2J" cleared the
// user's terminal. Such a name is kept with them written out (\x1b), in
// every output alike.
void Graph::escapeControlCharactersInNames() {
  size_t count = 0;
  std::string first;
  const char* last_clean = nullptr;  // names are interned: most repeat the node before
  for (Node& n : nodes_) {
    if (n.name.data() == last_clean) continue;
    if (!text::hasControlCharacters(n.name.view())) {
      last_clean = n.name.data();
      continue;
    }
    n.name = InternedText(text::withControlCharactersEscaped(n.name.view()));
    if (count++ == 0) first = fmt::format("node {} '{}'", n.id, n.name.str());
  }
  if (count > 0) {
    warnings.push_back(fmt::format(
        "{} node name(s) hold control characters, written out as \\xNN (first: {})", count, first));
  }
}

// Tensor ids come from pointers and are reused once memory is freed, so a
// tensor is its whole recorded identity (id, storage, offset, numel, itemsize,
// device). Reuse is rare: index by id, chain the few records sharing one.
void Graph::buildTensorTable() {
  tensors_.clear();
  // Sized for about one distinct tensor id per two nodes; grows if needed.
  detail::TensorIdIndex last_with_id(nodes_.size() / 2);  // id -> newest record
  std::vector<uint32_t> previous_with_id;                 // record -> older, or kNone
  const auto same = [](const TensorRecord& r, const TensorValue& t) {
    return r.storage_id == t.storage_id && r.offset == t.offset && r.numel == t.numel &&
           r.itemsize == t.itemsize && text::equalShort(r.device, t.device);
  };
  // The Values (120 bytes, two cache lines each) were written long before
  // and are cold: fetching the ones of a few nodes ahead hides most misses.
  const auto prefetch = [](const std::vector<Value>& values) {
    for (const Value& v : values) {
      const char* p = reinterpret_cast<const char*>(&v);
      for (size_t at = 0; at < sizeof(Value); at += 64) __builtin_prefetch(p + at);
    }
  };
  constexpr size_t kAhead = 2;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (i + kAhead < nodes_.size()) {
      prefetch(nodes_[i + kAhead].inputs);
      prefetch(nodes_[i + kAhead].outputs);
    }
    const Node& n = nodes_[i];
    for (int side = 0; side < 2; ++side) {
      const bool is_input = side == 0;
      for (const Value& v : is_input ? n.inputs : n.outputs) {
        forEachTensor(v, [&](const TensorValue& t) {
          if (!t.defined()) return;
          uint32_t& newest = last_with_id.slot(t.tensor_id);
          for (uint32_t r = newest; r != detail::TensorIdIndex::kNone; r = previous_with_id[r]) {
            if (same(tensors_[r], t)) return;
          }
          previous_with_id.push_back(newest);
          newest = static_cast<uint32_t>(tensors_.size());
          tensors_.push_back(TensorRecord{t.tensor_id, t.storage_id, t.offset, t.numel, t.itemsize,
                                          t.device, t.dtype, n.id, is_input});
        });
      }
    }
  }
}

}  // namespace tracetwin::core
