// Chakra ET -> Graph. Each Chakra node is turned back into the ET node it was
// converted from and the whole is parsed by the ET reader (parseTrace), so
// values are typed, collectives recognised and ops selected exactly as for a
// JSON trace. What the PyTorch converter changed is undone first:
//  - A CPU op that launched kernels is split into "op(0)", "op(1)" ... (one
//    part per stretch between launches, all with the op's rf_id); the parts
//    are folded back into one node, the "(0)" part's id. The shared trace
//    chakra_protobuf.0.et.gz has 899 such ops in 2,122 parts.
//  - The root and thread nodes are dropped (and with them the first
//    ctrl_dep of every top-level op): nodes whose parent is not in the file
//    go under a thread node of their tid, made for the purpose, under a
//    made root.
// Files tracetwin wrote (GlobalMetadata attribute "tracetwin_durations")
// keep the ET's structure as it was: ctrl_deps is the parent, nothing is
// folded, and is_cpu_op says where a duration was measured, not what a node is.
//  - Older converters wrote the order of execution into ctrl_deps, not the
//    ET parent: in the shared trace CPU op 3396 (convolution_backward) has
//    its own kernel 3403 as ctrl_dep, and 3403 has 3396. A ctrl_dep is taken
//    as the parent only where it can be one: a CPU node (a kernel is never
//    an ET node's parent), and not one that would close a cycle. Otherwise
//    the node goes under its thread, as above.
#include <fmt/core.h>

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "core/chakra/chakra_attributes.h"
#include "core/chakra/chakra_file.h"
#include "core/chakra/chakra_trace.h"
#include "core/chakra/python_literal.h"
#include "core/errors.h"
#include "core/trace_reader.h"

namespace tracetwin::core::chakra {
namespace {

using ChakraProtoMsg::AttributeProto;
using ChakraProtoMsg::Node;

static_assert(int(NodeType::kCommColl) == ChakraProtoMsg::COMM_COLL_NODE);
static_assert(int(NodeType::kMemStore) == ChakraProtoMsg::MEM_STORE_NODE);
static_assert(int(CollectiveType::kBarrier) == ChakraProtoMsg::BARRIER);
static_assert(int(CollectiveType::kAllToAll) == ChakraProtoMsg::ALL_TO_ALL);

constexpr std::string_view kProcessName = "[pytorch|profiler|execution_trace|process]";
constexpr std::string_view kThreadName = "[pytorch|profiler|execution_trace|thread]";

using detail::attrJson;
using detail::attrText;
using detail::findAttr;
using detail::intOf;
using detail::jsonQuoted;
using detail::recordOf;
using detail::summarize;


// "aten::copy_(1)" -> ("aten::copy_", 1); k = -1 when the name has no such tail.
std::pair<std::string_view, int> splitPart(std::string_view name) {
  if (name.size() < 4 || name.back() != ')') return {name, -1};
  const size_t open = name.rfind('(');
  if (open == std::string_view::npos || open == 0 || open + 2 >= name.size()) return {name, -1};
  int k = 0;
  for (size_t i = open + 1; i + 1 < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || k > 100000) return {name, -1};
    k = k * 10 + (name[i] - '0');
  }
  return {name.substr(0, open), k};
}

// The op_schema names the op the parts belong to: "aten::copy_(Tensor(a!) ..."
// or "aten::add.Tensor(...)" for the base "aten::add".
bool schemaNames(std::string_view schema, std::string_view base) {
  return schema.size() > base.size() && schema.substr(0, base.size()) == base &&
         (schema[base.size()] == '(' || schema[base.size()] == '.');
}

struct Rebuilt {
  std::vector<const Node*> nodes;                   // the nodes kept, file order
  std::unordered_map<uint64_t, uint64_t> merged;    // part id -> its "(0)" part's id
  std::unordered_map<uint64_t, std::string> names;  // kept id -> name without "(0)"
};

Rebuilt foldSplitParts(const detail::ChakraFile& file) {
  Rebuilt out;
  struct Open {
    uint64_t head;
    int next;
  };
  // (tid, rf_id, base) -> the op whose parts are still coming
  std::map<std::tuple<int64_t, int64_t, std::string>, Open> open;
  for (const Node& n : file.nodes) {
    const auto [base, k] = splitPart(n.name());
    const AttributeProto* schema = findAttr(n, "op_schema");
    const AttributeProto* rf = findAttr(n, "rf_id");
    const AttributeProto* cpu = findAttr(n, "is_cpu_op");
    const bool is_part = k >= 0 && rf != nullptr && (cpu == nullptr || cpu->bool_val()) &&
                         schema != nullptr && schemaNames(schema->string_val(), base);
    if (!is_part) {
      out.nodes.push_back(&n);
      continue;
    }
    const AttributeProto* tid = findAttr(n, "tid");
    auto key = std::make_tuple(tid ? intOf(*tid).value_or(-1) : -1, intOf(*rf).value_or(-1),
                               std::string(base));
    auto it = open.find(key);
    if (k > 0 && it != open.end() && it->second.next == k) {
      out.merged[n.id()] = it->second.head;
      ++it->second.next;
      continue;
    }
    open[key] = {n.id(), 1};
    out.nodes.push_back(&n);
    out.names[n.id()] = std::string(base);
  }
  return out;
}

class GraphText {
 public:
  GraphText(const std::string& path, const detail::ChakraFile& file, ChakraSummary& summary)
      : path_(path), file_(file), summary_(summary) {}

  std::string build() {
    const bool ours = !meta("tracetwin_durations").empty() || hasMeta("tracetwin_durations");
    Rebuilt r = ours ? keepAll(file_) : foldSplitParts(file_);
    summary_.merged_parts = static_cast<int64_t>(r.merged.size());
    for (const Node* n : r.nodes) {
      present_.insert(n->id());
      const AttributeProto* cpu = findAttr(*n, "is_cpu_op");
      if (!ours && cpu != nullptr && !intOf(*cpu).value_or(1)) device_nodes_.insert(n->id());
    }
    uint64_t max_id = 0;
    for (const Node& n : file_.nodes) {
      // Graph ids are int64: one above would turn negative (and max_id + 1 wrap).
      if (n.id() > uint64_t(std::numeric_limits<int64_t>::max())) {
        throw InputError(fmt::format("{}: node \"{}\" has id {}: expected 0 to 2^63-1", path_,
                                     n.name(), n.id()));
      }
      max_id = std::max<uint64_t>(max_id, n.id());
    }
    next_id_ = max_id + 1;
    for (const Node* n : r.nodes) {
      if (isProcess(n->name()) && n->ctrl_deps().empty()) root_ = static_cast<int64_t>(n->id());
    }
    std::unordered_map<uint64_t, int64_t> parent;
    for (const Node* n : r.nodes) parent[n->id()] = recordedParent(*n, r);
    breakCycles(r, parent);
    std::string nodes;
    for (const Node* n : r.nodes) {
      if (!nodes.empty()) nodes += ",\n";
      int64_t p = parent.at(n->id());
      if (p == kUnplaced) p = underThread(*n);
      const auto name = r.names.find(n->id());
      nodes += nodeJson(*n, p, name != r.names.end() ? name->second : n->name());
    }
    for (const auto& [tid, id] : threads_) {
      nodes += ",\n" + structuralNode(id, std::string(kThreadName), root(), tid);
    }
    if (summary_.synthesized_root)
      nodes += ",\n" + structuralNode(root_, std::string(kProcessName), root_, -1);
    return fmt::format(
        R"({{"schema": {}, "pid": {}, "time": {}, "start_ts": {}, "finish_ts": {}, "nodes": [
{}]}})",
        jsonQuoted(schema()), metaInt("pid"), jsonQuoted(meta("time")), metaInt("start_ts"),
        metaInt("finish_ts"), nodes);
  }

  std::string schema() const {
    const std::string s = meta("schema");
    const auto& known = knownSchemas();
    return std::find(known.begin(), known.end(), s) != known.end() ? s : known.back();
  }

 private:
  static bool isProcess(std::string_view name) {
    return name.substr(0, 18) == "[pytorch|profiler|" && name.size() > 9 &&
           name.substr(name.size() - 9) == "|process]";
  }

  static Rebuilt keepAll(const detail::ChakraFile& file) {
    Rebuilt r;
    for (const Node& n : file.nodes) r.nodes.push_back(&n);
    return r;
  }

  bool hasMeta(std::string_view key) const {
    for (const AttributeProto& a : file_.metadata.attr())
      if (a.name() == key) return true;
    return false;
  }

  std::string meta(std::string_view key) const {
    for (const AttributeProto& a : file_.metadata.attr())
      if (a.name() == key) return attrText(a);
    return "";
  }
  std::string metaInt(std::string_view key) const {
    for (const AttributeProto& a : file_.metadata.attr())
      if (a.name() == key) return std::to_string(intOf(a).value_or(0));
    return "0";
  }

  int64_t root() {
    if (root_ < 0) {
      root_ = static_cast<int64_t>(next_id_++);
      summary_.synthesized_root = true;
    }
    return root_;
  }

  int64_t threadFor(int64_t tid) {
    auto it = threads_.find(tid);
    if (it != threads_.end()) return it->second;
    root();
    const int64_t id = static_cast<int64_t>(next_id_++);
    threads_.emplace(tid, id);
    ++summary_.synthesized_threads;
    return id;
  }

  static constexpr int64_t kUnplaced = -2;  // goes under its thread's node

  // The first ctrl_dep in the file (after folding parts) that can be a
  // parent; kUnplaced when none can.
  int64_t recordedParent(const Node& n, const Rebuilt& r) {
    if (static_cast<int64_t>(n.id()) == root_) return root_;
    for (uint64_t dep : n.ctrl_deps()) {
      auto m = r.merged.find(dep);
      const uint64_t id = m != r.merged.end() ? m->second : dep;
      if (present_.count(id) && id != n.id() && !device_nodes_.count(id))
        return static_cast<int64_t>(id);
    }
    if (!n.ctrl_deps().empty()) ++summary_.reattached_nodes;
    return kUnplaced;
  }

  // A chain of parents that comes back to itself is cut where it closes:
  // that node goes under its thread instead.
  void breakCycles(const Rebuilt& r, std::unordered_map<uint64_t, int64_t>& parent) {
    enum : uint8_t { kNew, kOnPath, kDone };
    std::unordered_map<uint64_t, uint8_t> state;
    std::vector<uint64_t> path;
    for (const Node* n : r.nodes) {
      path.clear();
      uint64_t at = n->id();
      while (state[at] == kNew) {
        state[at] = kOnPath;
        path.push_back(at);
        const int64_t p = parent.at(at);
        if (p < 0 || p == static_cast<int64_t>(at) || !parent.count(uint64_t(p))) break;
        if (state[uint64_t(p)] == kOnPath) {
          parent[at] = kUnplaced;
          ++summary_.reattached_nodes;
          break;
        }
        at = uint64_t(p);
      }
      for (uint64_t id : path) state[id] = kDone;
    }
  }

  int64_t underThread(const Node& n) {
    if (n.name().find("|thread]") != std::string::npos) return root();
    const AttributeProto* tid = findAttr(n, "tid");
    return threadFor(tid ? intOf(*tid).value_or(0) : 0);
  }

  std::string side(const ChakraProtoMsg::IOInfo& io, const Node& n, const char* which,
                   const AttributeProto* strides) const {
    auto conv = [&](const std::string& text, const char* field) {
      return pythonLiteralToJson(text, fmt::format("{}: node {} (byte {}): {}.{}", path_, n.id(),
                                                   offsetOf(n), which, field));
    };
    std::string out =
        fmt::format(R"({{"values": {}, "shapes": {}, "types": {})", conv(io.values(), "values"),
                    conv(io.shapes(), "shapes"), conv(io.types(), "types"));
    if (strides != nullptr && strides->value_case() == AttributeProto::kStringVal)
      out += fmt::format(R"(, "strides": {})", conv(strides->string_val(), "strides"));
    return out + "}";
  }

  uint64_t offsetOf(const Node& n) const {
    const size_t i = static_cast<size_t>(&n - file_.nodes.data());
    return i < file_.offsets.size() ? file_.offsets[i] : 0;
  }

  std::string nodeJson(const Node& n, int64_t parent, const std::string& name) const {
    std::string attrs;
    for (const AttributeProto& a : n.attr()) {
      const std::optional<std::string> v = attrJson(a);
      if (!v || a.name().empty()) continue;
      if (!attrs.empty()) attrs += ',';
      attrs += fmt::format(R"({{"name": {}, "type": "", "value": {}}})", jsonQuoted(a.name()), *v);
    }
    return fmt::format(
        R"({{"id": {}, "name": {}, "ctrl_deps": {}, "inputs": {}, "outputs": {}, "attrs": [{}]}})",
        n.id(), jsonQuoted(name), parent,
        side(n.inputs(), n, "inputs", findAttr(n, "input_strides")),
        side(n.outputs(), n, "outputs", findAttr(n, "output_strides")), attrs);
  }

  static std::string structuralNode(int64_t id, const std::string& name, int64_t parent,
                                    int64_t tid) {
    return fmt::format(
        R"({{"id": {}, "name": {}, "ctrl_deps": {}, "inputs": {{"values": [], "shapes": [], "types": []}}, "outputs": {{"values": [], "shapes": [], "types": []}}, "attrs": [{}]}})",
        id, jsonQuoted(name), parent,
        tid >= 0 ? fmt::format(R"({{"name": "tid", "type": "uint64", "value": {}}})", tid) : "");
  }

  const std::string& path_;
  const detail::ChakraFile& file_;
  ChakraSummary& summary_;
  std::unordered_set<uint64_t> present_;
  std::unordered_set<uint64_t> device_nodes_;  // is_cpu_op false: kernels, never parents
  std::map<int64_t, int64_t> threads_;         // tid -> made thread node id
  uint64_t next_id_ = 0;
  int64_t root_ = -1;
};

}  // namespace

const char* nodeTypeName(NodeType type) {
  return ChakraProtoMsg::NodeType_Name(ChakraProtoMsg::NodeType(int(type))).c_str();
}

const char* collectiveTypeName(CollectiveType type) {
  return ChakraProtoMsg::CollectiveCommType_Name(ChakraProtoMsg::CollectiveCommType(int(type)))
      .c_str();
}

bool looksLikeChakraTrace(std::string_view head) {
  // JSON (after any blanks) starts with '{' or '['.
  size_t j = 0;
  while (j < head.size() &&
         (head[j] == ' ' || head[j] == '\n' || head[j] == '\r' || head[j] == '\t'))
    ++j;
  if (j < head.size() && (head[j] == '{' || head[j] == '[')) return false;
  // A varint length, then the GlobalMetadata's first field: version (tag
  // 0x0a, a short string) or an attribute (tag 0x12) whose name field (tag
  // 0x0a) comes first.
  size_t i = 0;
  while (i < head.size() && i < 5 && (static_cast<unsigned char>(head[i]) & 0x80)) ++i;
  if (i + 3 >= head.size()) return false;
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(head[k]); };
  if (byte(i + 1) == 0x12) return byte(i + 3) == 0x0a;
  if (byte(i + 1) != 0x0a) return false;
  const size_t len = byte(i + 2);
  if (len == 0 || len > 32 || i + 3 + len > head.size()) return false;
  for (size_t k = i + 3; k < i + 3 + len; ++k)
    if (byte(k) < 0x20 || byte(k) > 0x7e) return false;
  return true;
}

std::vector<NodeRecord> readChakraNodes(const std::string& path, ChakraSummary* summary) {
  const detail::ChakraFile file = detail::readChakraFile(path);
  std::vector<NodeRecord> records;
  records.reserve(file.nodes.size());
  for (size_t i = 0; i < file.nodes.size(); ++i)
    records.push_back(recordOf(file.nodes[i], file.offsets[i]));
  if (summary != nullptr) *summary = summarize(file, records, path);
  return records;
}

namespace {

Graph graphOf(const detail::ChakraFile& file, const std::string& path, ChakraSummary* summary) {
  std::vector<NodeRecord> records;
  records.reserve(file.nodes.size());
  for (size_t i = 0; i < file.nodes.size(); ++i)
    records.push_back(recordOf(file.nodes[i], file.offsets[i]));
  ChakraSummary s = summarize(file, records, path);
  if (file.nodes.empty()) {
    throw InputError(fmt::format("{}: a Chakra GlobalMetadata and no Node: nothing to read", path));
  }
  GraphText text(path, file, s);
  const std::string json = text.build();
  Graph graph;
  try {
    graph = parseTrace(json, path);
  } catch (const InputError& e) {
    throw InputError(fmt::format(
        "{} (reading a Chakra ET: its nodes were rebuilt as ET JSON, where byte offsets count; "
        "node ids are the Chakra nodes')",
        e.what()));
  }
  graph.format =
      fmt::format("Chakra protobuf ET {}", s.version.empty() ? "(no version)" : s.version);
  const std::string recorded = s.metadata.count("schema") ? s.metadata.at("schema") : "";
  graph.schema = recorded.empty() ? std::string("none recorded") : recorded;
  if (s.merged_parts > 0) {
    graph.warnings.push_back(fmt::format(
        "{} Chakra nodes \"op(1)\", \"op(2)\" ... folded into their op's \"op(0)\" node (the "
        "converter's split of an op around its kernel launches)",
        s.merged_parts));
  }
  if (s.synthesized_root || s.synthesized_threads > 0) {
    graph.warnings.push_back(fmt::format(
        "{} nodes whose parent the Chakra file does not give were put under {} thread node(s){}",
        s.reattached_nodes, s.synthesized_threads,
        s.synthesized_root ? " and a root made for them" : ""));
  }
  if (summary != nullptr) *summary = std::move(s);
  return graph;
}

}  // namespace

Graph readChakraTrace(const std::string& path, ChakraSummary* summary) {
  return graphOf(detail::readChakraFile(path), path, summary);
}

Graph parseChakraTrace(std::string_view bytes, const std::string& source, ChakraSummary* summary) {
  return graphOf(detail::parseChakraBytes(bytes, source), source, summary);
}

}  // namespace tracetwin::core::chakra
