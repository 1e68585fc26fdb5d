// The one graph both replay and prediction walk: every node of an execution
// trace with its typed arguments, parsed schema and attributes, whatever the
// schema version it was read from.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/boxed.h"
#include "core/node_index.h"
#include "core/op_schema.h"
#include "core/value.h"

namespace tracetwin::core {

using NodeId = int64_t;
inline constexpr NodeId kNoNode = -1;

// What a node is for selection (DESIGN.md "Operator selection").
enum class NodeCategory : uint8_t {
  kLabel,          // record_function ranges, thread/process roots, autograd labels
  kAtenCompute,    // operator in the aten:: (or prims::) namespace
  kCommunication,  // record_param_comms; a c10d:: op or gloo:/nccl: label without one inside
  kTriton,         // kernel_backend == "triton"
  kCustom,         // operator with a schema in any other namespace
};
const char* nodeCategoryName(NodeCategory category);
inline bool isOperator(NodeCategory c) { return c != NodeCategory::kLabel; }

// Attributes of record_param_comms nodes (schema >= 1.1.0 records them as
// attrs; older traces carry some of them only as positional inputs).
struct CommAttributes {
  std::string collective_name;  // "all_reduce", "broadcast", "all_gather" ...
  std::string dtype;            // "Float", "Half" ...
  int64_t in_msg_nelems = 0;
  int64_t out_msg_nelems = 0;
  std::vector<int64_t> in_split_size;
  std::vector<int64_t> out_split_size;
  int64_t global_rank_start = -1;
  int64_t global_rank_stride = -1;
  std::string pg_name;
  std::string pg_desc;
  int64_t pg_size = -1;  // -1 when not recorded
  bool is_asynchronized_op = false;
};
// Bytes per element of a comms "dtype" (c10::ScalarType's spelling: "Float",
// "BFloat16"; trace type names such as "float" are read too); 0 when unknown.
int64_t commItemsize(const std::string& dtype);

struct Node {
  NodeId id = kNoNode;
  InternedText name;  // interned: a trace repeats a few hundred names
  NodeId parent = kNoNode;       // "parent" (legacy) or "ctrl_deps"
  std::vector<NodeId> children;  // in execution order (ascending id)
  int64_t rf_id = -1;
  int64_t fw_parent = -1;
  int64_t seq_id = -1;
  int64_t scope = -1;
  int64_t tid = -1;
  int64_t fw_tid = -1;
  // Verbatim, may be empty. Interned and parsed once per distinct text: a
  // trace repeats a few hundred distinct schemas over many thousands of
  // nodes, and one copy per node was ~0.6x the file size in memory.
  InternedText op_schema_text;
  // Parsed when op_schema_text is set; null otherwise; shared likewise.
  std::shared_ptr<const OpSchema> schema;
  InternedText kernel_backend;  // "triton" or empty
  InternedText kernel_file;
  std::string tensor_range;    // raw JSON text of the attribute, may be empty
  Boxed<CommAttributes> comm;  // set for record_param_comms (has_value())
  std::vector<Value> inputs;
  std::vector<Value> outputs;
  NodeCategory category = NodeCategory::kLabel;
};

// One distinct tensor of the trace. Tensor ids come from pointers and are
// reused after memory is freed, so the key is the whole recorded identity,
// (id, storage, offset, numel, itemsize, device); the same key seen again
// later is the same entry.
struct TensorRecord {
  int64_t tensor_id = 0;
  int64_t storage_id = 0;
  int64_t offset = 0;
  int64_t numel = 0;
  int64_t itemsize = 0;
  std::string device;
  DType dtype = DType::kUnknown;
  NodeId first_node = kNoNode;  // node (in execution order) that first uses it
  bool first_seen_as_input = false;
};

class Graph {
 public:
  std::string schema;  // "1.0.1", "1.1.0-chakra.0.0.4" ...
  int64_t pid = 0;
  std::string time;
  int64_t start_ts = 0;
  int64_t finish_ts = 0;
  std::string source_path;            // file it was read from, for messages
  std::string format;                 // empty: a JSON ET; "Chakra protobuf ET 0.0.4" ...
  std::vector<std::string> warnings;  // e.g. newer minor schema version

  // Nodes sorted by id (= execution order of entry). Use node(id) for lookup.
  const std::vector<Node>& nodes() const { return nodes_; }
  const Node& node(NodeId id) const;      // throws InputError if absent
  const Node* findNode(NodeId id) const;  // nullptr if absent
  NodeId rootId() const { return root_; }
  std::vector<NodeId> threadRoots() const;  // children of the root
  const std::vector<TensorRecord>& tensors() const { return tensors_; }

  // Used by the reader (and by tests that build graphs by hand): adds nodes,
  // then finalize() links children, checks parents and cycles, classifies
  // nodes and builds the tensor table. Throws InputError on a bad structure.
  void addNode(Node node);
  void finalize();
  // For the reader: a new default Node at the end, filled in place (saves
  // moving ~700-byte Nodes), and a capacity hint from the file size.
  Node& emplaceNode() { return nodes_.emplace_back(); }
  void reserveNodes(size_t n);
  size_t nodeCount() const { return nodes_.size(); }
  // For the streaming reader: drops the nodes added since the count was n
  // (a batch it will read again another way).
  void truncateNodes(size_t n) {
    nodes_.erase(nodes_.begin() + static_cast<ptrdiff_t>(n), nodes_.end());
  }
  // For the reader's parser threads: moves `batch`'s nodes (a batch of the
  // file read on another thread) to the end of this Graph's.
  void appendNodes(Graph&& batch);

 private:
  // Steps of finalize(), in order.
  void sortNodesById();
  void findRoot();
  void linkChildren();
  void checkAcyclic() const;
  void parseSchemas();
  void noteNamesThatAreNotTheirSchemas();
  void escapeControlCharactersInNames();
  void promoteBareCollectives();  // core/bare_collectives.cpp
  void buildTensorTable();

  std::vector<Node> nodes_;
  detail::NodeIndex index_;
  std::vector<TensorRecord> tensors_;
  NodeId root_ = kNoNode;
};

// Classifies one node by the Mystique/param rules (DESIGN.md).
NodeCategory classifyNode(const Node& node);

// The top-level operators of one iteration (DESIGN.md "Operator selection").
struct Selection {
  std::vector<NodeId> ops;  // in execution order
  // The DataLoader labels the walk dropped (their ops load data, not the
  // model's step; their time is the step's: the predictor charges it from a
  // linked trace's overheads table), in id order.
  std::vector<NodeId> data_loaders;
  // Iteration window from ProfilerStep#N labels: ids strictly between the
  // first two steps' label ids; nullopt when fewer than two steps exist.
  std::optional<std::pair<NodeId, NodeId>> window;
  int64_t comm_ops = 0;
  int64_t triton_ops = 0;
  int64_t custom_ops = 0;
};

Selection selectTopLevelOps(const Graph& graph);

// "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__": a label whose
// subtree is data loading (dropped by the selection; a region of its own in
// the CPU overheads of core/kineto/overheads.h).
bool isDataLoaderLabel(std::string_view name);

}  // namespace tracetwin::core
