// Graph + ExportPlan -> Chakra ET. Every graph node is written, in id order,
// with its ET parent as ctrl_deps and its recorded inputs/outputs and
// attributes, so that reading the file back gives the same graph. The plan's
// ops (one iteration's top-level ops) carry what a simulator needs: type,
// duration, data_deps and the comm or memory attributes ASTRA-sim's feeder
// reads (comm_type, comm_size, comm_src, comm_dst, comm_tag, pg_name,
// tensor_size, is_cpu_op; attribute value types as the feeder reads them).
// Everything else is an INVALID_NODE, which ASTRA-sim skips.
#include <fmt/core.h>
#include <sys/stat.h>

#include <limits>

#include "core/chakra/chakra_file.h"
#include "core/chakra/chakra_trace.h"
#include "core/chakra/et_node_text.h"
#include "core/errors.h"

namespace tracetwin::core::chakra {
namespace {

using ChakraProtoMsg::AttributeProto;

// Chakra's schema version these files follow (et_def.proto as published with
// Chakra 0.0.4, the version string the PyTorch converter writes).
constexpr const char* kChakraVersion = "0.0.4";

void addInt(ChakraProtoMsg::Node& n, const char* name, int64_t v) {
  AttributeProto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}
void addInt32(ChakraProtoMsg::Node& n, const char* name, int64_t v) {
  AttributeProto* a = n.add_attr();
  a->set_name(name);
  a->set_int32_val(static_cast<int32_t>(v));
}
void addString(ChakraProtoMsg::Node& n, const char* name, const std::string& v) {
  AttributeProto* a = n.add_attr();
  a->set_name(name);
  a->set_string_val(v);
}
void addBool(ChakraProtoMsg::Node& n, const char* name, bool v) {
  AttributeProto* a = n.add_attr();
  a->set_name(name);
  a->set_bool_val(v);
}

void addIntsIfAny(ChakraProtoMsg::Node& n, const char* name, const std::vector<int64_t>& v) {
  if (v.empty()) return;
  AttributeProto* a = n.add_attr();
  a->set_name(name);
  for (int64_t x : v) a->mutable_int64_list()->add_values(x);
}

// The ET attributes the reader knows (core/node_attributes.cpp), as recorded.
void addEtAttributes(const Node& g, ChakraProtoMsg::Node& n) {
  addInt(n, "rf_id", g.rf_id);
  addInt(n, "fw_parent", g.fw_parent);
  addInt(n, "seq_id", g.seq_id);
  addInt(n, "scope", g.scope);
  addInt(n, "tid", g.tid);
  addInt(n, "fw_tid", g.fw_tid);
  if (!g.op_schema_text.empty()) addString(n, "op_schema", g.op_schema_text);
  if (!g.kernel_backend.empty()) addString(n, "kernel_backend", g.kernel_backend);
  if (!g.kernel_file.empty()) addString(n, "kernel_file", g.kernel_file);
  if (!g.tensor_range.empty()) addString(n, "tensor_range", g.tensor_range);
  if (!g.comm) return;
  const CommAttributes& c = *g.comm;
  if (!c.collective_name.empty()) addString(n, "collective_name", c.collective_name);
  if (!c.dtype.empty()) addString(n, "dtype", c.dtype);
  addInt(n, "in_msg_nelems", c.in_msg_nelems);
  addInt(n, "out_msg_nelems", c.out_msg_nelems);
  addIntsIfAny(n, "in_split_size", c.in_split_size);
  addIntsIfAny(n, "out_split_size", c.out_split_size);
  addInt(n, "global_rank_start", c.global_rank_start);
  addInt(n, "global_rank_stride", c.global_rank_stride);
  if (!c.pg_name.empty()) addString(n, "pg_name", c.pg_name);
  if (!c.pg_desc.empty()) addString(n, "pg_desc", c.pg_desc);
  addInt(n, "pg_size", c.pg_size);
  if (c.is_asynchronized_op) addBool(n, "is_asynchronized_op", true);
}

void setSide(const std::vector<Value>& side, ChakraProtoMsg::IOInfo* io, ChakraProtoMsg::Node& n,
             const char* strides_attr) {
  SideText t = sideText(side);
  io->set_values(std::move(t.values));
  io->set_shapes(std::move(t.shapes));
  io->set_types(std::move(t.types));
  // IOInfo has no strides: recorded ones (schema 1.1.1) travel as an attribute.
  if (!t.strides.empty()) addString(n, strides_attr, t.strides);
}

uint64_t micros(double us) { return us > 0 ? static_cast<uint64_t>(us + 0.5) : 0; }

void applyOp(const ExportOp& op, int64_t rank, ChakraProtoMsg::Node& n, WriteStats& stats) {
  n.set_type(static_cast<ChakraProtoMsg::NodeType>(int(op.type)));
  n.set_duration_micros(micros(op.duration_us));
  if (op.start_us >= 0) n.set_start_time_micros(micros(op.start_us));
  for (NodeId dep : op.data_deps) n.add_data_deps(static_cast<uint64_t>(dep));
  stats.data_deps += static_cast<int64_t>(op.data_deps.size());
  // ASTRA-sim refuses comm nodes marked as CPU ops ("Comm node should not be
  // on CPU").
  const bool comm = op.type == NodeType::kCommColl || op.type == NodeType::kCommSend ||
                    op.type == NodeType::kCommRecv;
  addBool(n, "is_cpu_op", op.on_cpu && !comm);
  if (comm) {
    if (op.collective) addInt(n, "comm_type", int(*op.collective));
    addInt(n, "comm_size", op.comm_bytes);
    // A count for the summary line: it saturates rather than wraps.
    if (__builtin_add_overflow(stats.comm_bytes, op.comm_bytes, &stats.comm_bytes))
      stats.comm_bytes = std::numeric_limits<int64_t>::max();
    if (!op.pg_name.empty()) addString(n, "pg_name", op.pg_name);
    addIntsIfAny(n, "pg_ranks", op.pg_ranks);
    if (op.type == NodeType::kCommSend) {
      addInt32(n, "comm_src", rank);
      if (op.peer >= 0) addInt32(n, "comm_dst", op.peer);
    } else if (op.type == NodeType::kCommRecv) {
      if (op.peer >= 0) addInt32(n, "comm_src", op.peer);
      addInt32(n, "comm_dst", rank);
    }
    if (op.tag >= 0 && op.type != NodeType::kCommColl) addInt32(n, "comm_tag", op.tag);
  }
  if (op.type == NodeType::kMemLoad || op.type == NodeType::kMemStore) {
    AttributeProto* a = n.add_attr();
    a->set_name("tensor_size");
    a->set_uint64_val(static_cast<uint64_t>(std::max<int64_t>(op.tensor_bytes, 0)));
  }
  if (!op.why.empty()) {
    AttributeProto* a = n.add_attr();
    a->set_name("tracetwin_type_from");
    a->set_string_val(op.why);
  }
}

ChakraProtoMsg::GlobalMetadata metadataOf(const Graph& graph, const ExportPlan& plan) {
  ChakraProtoMsg::GlobalMetadata m;
  m.set_version(kChakraVersion);
  auto add = [&m](const char* name) {
    AttributeProto* a = m.add_attr();
    a->set_name(name);
    return a;
  };
  add("schema")->set_string_val(graph.schema);
  add("pid")->set_uint64_val(static_cast<uint64_t>(std::max<int64_t>(graph.pid, 0)));
  add("time")->set_string_val(graph.time);
  add("start_ts")->set_uint64_val(static_cast<uint64_t>(std::max<int64_t>(graph.start_ts, 0)));
  add("finish_ts")->set_uint64_val(static_cast<uint64_t>(std::max<int64_t>(graph.finish_ts, 0)));
  add("tracetwin_durations")->set_string_val(plan.durations_from);
  if (plan.rank >= 0) add("rank")->set_int64_val(plan.rank);
  if (plan.world_size > 0) add("world_size")->set_int64_val(plan.world_size);
  return m;
}

}  // namespace

WriteStats writeChakraTrace(const std::string& path, const Graph& graph, const ExportPlan& plan) {
  for (const auto& [id, op] : plan.ops) {
    if (graph.findNode(id) == nullptr) {
      throw UsageError(fmt::format("{}: the export plan names node {}, which {} does not have",
                                   path, id, graph.source_path));
    }
  }
  WriteStats stats;
  detail::ChakraFileWriter out(path, metadataOf(graph, plan));
  ChakraProtoMsg::Node n;
  for (const Node& g : graph.nodes()) {
    n.Clear();
    n.set_id(static_cast<uint64_t>(g.id));
    n.set_name(g.name);
    // The root is its own parent in the ET; in Chakra it has none.
    if (g.parent != kNoNode && g.parent != g.id) n.add_ctrl_deps(static_cast<uint64_t>(g.parent));
    setSide(g.inputs, n.mutable_inputs(), n, "input_strides");
    setSide(g.outputs, n.mutable_outputs(), n, "output_strides");
    addEtAttributes(g, n);
    auto op = plan.ops.find(g.id);
    if (op != plan.ops.end()) {
      applyOp(op->second, plan.rank, n, stats);
    } else {
      n.set_type(ChakraProtoMsg::INVALID_NODE);
    }
    ++stats.nodes;
    ++stats.node_types[ChakraProtoMsg::NodeType_Name(n.type())];
    out.write(n);
  }
  out.close();
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) stats.file_bytes = static_cast<uint64_t>(st.st_size);
  return stats;
}

}  // namespace tracetwin::core::chakra
