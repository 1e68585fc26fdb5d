// Chakra execution traces (MLCommons Chakra's protobuf ET, the input of
// ASTRA-sim): read into the Graph every command walks, and written from one.
// This header is protobuf-free; the schema is core/chakra/et_def.proto.
//
// Reading: readTrace() (core/trace_reader.h) hands a file that starts like
// a Chakra ET to readChakraTrace, so `inspect`, `predict` and `link` take
// either format. Each Chakra node becomes the ET node it was converted from
// (its inputs/outputs text, its attributes, its first ctrl_dep as parent);
// docs/timeline.md, "Chakra ET", says what is rebuilt and how.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/graph.h"

namespace tracetwin::core::chakra {

// Node types and collectives with the schema's numbers (checked against the
// generated enums at compile time).
enum class NodeType : int {
  kInvalid = 0,
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kComp = 4,
  kCommSend = 5,
  kCommRecv = 6,
  kCommColl = 7,
};
const char* nodeTypeName(NodeType type);  // "COMP_NODE" ...

enum class CollectiveType : int {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};
const char* collectiveTypeName(CollectiveType type);  // "ALL_REDUCE" ...

// True when `head` (the first bytes of a decompressed file) starts like a
// Chakra ET: a varint length, then a GlobalMetadata's field tags.
bool looksLikeChakraTrace(std::string_view head);

// One Chakra node as a simulator sees it (no inputs/outputs text).
struct NodeRecord {
  uint64_t id = 0;
  std::string name;
  int type = 0;  // NodeType value; others (STORAGE_NODE ...) kept as numbers
  std::vector<uint64_t> ctrl_deps;
  std::vector<uint64_t> data_deps;
  uint64_t start_time_micros = 0;
  uint64_t duration_micros = 0;
  std::optional<bool> is_cpu_op;
  std::optional<int64_t> comm_type;  // CollectiveType value
  std::optional<int64_t> comm_size;  // bytes
  std::optional<int64_t> comm_src, comm_dst, tensor_size;
  std::string pg_name;
  uint64_t offset = 0;  // byte of the node in the decompressed file
};

struct ChakraSummary {
  std::string version;                          // GlobalMetadata.version
  std::map<std::string, std::string> metadata;  // GlobalMetadata attributes, as text
  int64_t nodes = 0;
  std::map<std::string, int64_t> node_types;  // "COMP_NODE" -> count
  int64_t cpu_nodes = 0, gpu_nodes = 0;       // by is_cpu_op (absent counts as CPU)
  int64_t comm_nodes = 0;                     // COMM_COLL, COMM_SEND, COMM_RECV
  int64_t comm_bytes = 0;                     // sum of comm_size
  // What reading into a Graph did (readChakraTrace only):
  int64_t merged_parts = 0;       // "op(1)", "op(2)" ... folded into "op(0)"
  int64_t reattached_nodes = 0;   // first ctrl_dep not in the file: put under a thread node
  bool synthesized_root = false;  // no process node in the file: one was made
  int64_t synthesized_threads = 0;
};

// The nodes of a Chakra ET, in file order (round-trip checks, `inspect`).
std::vector<NodeRecord> readChakraNodes(const std::string& path, ChakraSummary* summary = nullptr);

// A Chakra ET as a Graph. Throws InputError (file, byte offset, node id,
// what was expected) on truncated or malformed protobuf, a message of the
// wrong type, or node text the ET reader cannot type.
Graph readChakraTrace(const std::string& path, ChakraSummary* summary = nullptr);
// The same from the decompressed bytes of a Chakra ET held in memory;
// `source` names it in errors (the fuzzer's way in).
Graph parseChakraTrace(std::string_view bytes, const std::string& source,
                       ChakraSummary* summary = nullptr);

// ---- writing ----------------------------------------------------------------

// What the exporter decided for one node it wants simulated (the top-level
// ops of one iteration). Every other graph node is written as an
// INVALID_NODE that keeps the ET structure (simulators skip those).
struct ExportOp {
  NodeType type = NodeType::kComp;
  double duration_us = 0;
  double start_us = -1;  // from the iteration start; < 0: not written
  bool on_cpu = false;   // is_cpu_op: the duration is host time
  std::vector<NodeId> data_deps;
  // COMM_* nodes:
  std::optional<CollectiveType> collective;  // COMM_COLL_NODE
  int64_t comm_bytes = 0;
  std::string pg_name;
  std::vector<int64_t> pg_ranks;  // the group's global ranks when known
  int64_t peer = -1;              // COMM_SEND: comm_dst; COMM_RECV: comm_src
  int64_t tag = -1;
  int64_t rank = -1;  // this rank (the other end of send/recv)
  // MEM_LOAD / MEM_STORE nodes:
  int64_t tensor_bytes = 0;
  std::string why;  // how the type was chosen, for the node's doc_string
};

struct ExportPlan {
  std::map<NodeId, ExportOp> ops;
  std::string durations_from;  // "replay", "prediction", "kineto" ...
  int64_t rank = -1;
  int64_t world_size = -1;
};

struct WriteStats {
  int64_t nodes = 0;
  std::map<std::string, int64_t> node_types;
  int64_t data_deps = 0;
  int64_t comm_bytes = 0;
  uint64_t file_bytes = 0;
};

// Writes `graph` as a Chakra ET to `path` (gzip when it ends in ".gz").
// Throws InputError when the file cannot be written, UsageError when the
// plan names a node the graph does not have.
WriteStats writeChakraTrace(const std::string& path, const Graph& graph, const ExportPlan& plan);

}  // namespace tracetwin::core::chakra
