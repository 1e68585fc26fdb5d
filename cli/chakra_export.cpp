#include "cli/chakra_export.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "core/errors.h"
#include "core/comm/collective_spec.h"

namespace tracetwin::cli {
namespace {

using core::chakra::CollectiveType;
using core::chakra::ExportOp;
using core::chakra::NodeType;
using core::comm::Collective;

constexpr const char* kWaits = "waits for an earlier collective";

// Chakra's collective for each of the replay's (the list variants and the
// one-tensor variants are the same collective to a network simulator).
struct CollectiveMapping {
  Collective kind;
  NodeType node;
  CollectiveType chakra;
};
constexpr std::array<CollectiveMapping, 14> kCollectives{{
    {Collective::kBroadcast, NodeType::kCommColl, CollectiveType::kBroadcast},
    {Collective::kAllReduce, NodeType::kCommColl, CollectiveType::kAllReduce},
    {Collective::kReduce, NodeType::kCommColl, CollectiveType::kReduce},
    {Collective::kAllGather, NodeType::kCommColl, CollectiveType::kAllGather},
    {Collective::kAllGatherIntoTensor, NodeType::kCommColl, CollectiveType::kAllGather},
    {Collective::kReduceScatter, NodeType::kCommColl, CollectiveType::kReduceScatter},
    {Collective::kReduceScatterTensor, NodeType::kCommColl, CollectiveType::kReduceScatter},
    {Collective::kAllToAll, NodeType::kCommColl, CollectiveType::kAllToAll},
    {Collective::kAllToAllSingle, NodeType::kCommColl, CollectiveType::kAllToAll},
    {Collective::kGather, NodeType::kCommColl, CollectiveType::kGather},
    {Collective::kScatter, NodeType::kCommColl, CollectiveType::kScatter},
    {Collective::kBarrier, NodeType::kCommColl, CollectiveType::kBarrier},
    {Collective::kSend, NodeType::kCommSend, CollectiveType::kAllReduce},
    {Collective::kRecv, NodeType::kCommRecv, CollectiveType::kAllReduce},
}};

// Adds `more` to `*bytes`; false past 2^63-1 (each recorded tensor fits in
// 64 bits, core/tensor_geometry.h, but a list of them need not).
bool addBytes(int64_t* bytes, int64_t more) { return !__builtin_add_overflow(*bytes, more, bytes); }

// What one rank contributes, as Chakra's converter counts comm_size
// (in_msg_nelems x element size): the payload argument's tensors, else the
// recorded element count (1.0.1 record_param_comms records no tensors; the
// reader checked that count's bytes fit, core/node_attributes.h).
int64_t payloadBytes(const core::Graph& graph, const core::Node& node,
                     const core::comm::CollectiveSpec& spec) {
  int64_t bytes = 0;
  bool fits = true;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (spec.payload_arg >= 0 && int(i) != spec.payload_arg) continue;
    core::forEachTensor(node.inputs[i], [&](const core::TensorValue& t) {
      if (t.defined()) fits = fits && addBytes(&bytes, t.bytes());
    });
  }
  if (!fits) {
    throw InputError(
        fmt::format("{}: node {}: the collective's tensors hold more than 2^63-1 bytes",
                    graph.source_path, node.id));
  }
  if (bytes == 0 && node.comm)
    bytes = node.comm->in_msg_nelems * core::commItemsize(node.comm->dtype);
  return bytes;
}

// The Int input whose schema argument has one of `names` (send/recv peers
// and tags); -1 when the schema or the value is not there.
int64_t intArgument(const core::Node& node, std::initializer_list<std::string_view> names) {
  if (!node.schema) return -1;
  const auto& args = node.schema->arguments;
  for (size_t i = 0; i < args.size() && i < node.inputs.size(); ++i) {
    for (std::string_view name : names) {
      if (args[i].name == name && node.inputs[i].kind == core::ValueKind::kInt)
        return node.inputs[i].int_value;
    }
  }
  return -1;
}

std::vector<int64_t> groupRanks(const core::Node& node) {
  std::vector<int64_t> ranks;
  if (!node.comm) return ranks;
  const core::CommAttributes& c = *node.comm;
  if (c.global_rank_start < 0 || c.global_rank_stride <= 0 || c.pg_size <= 0) return ranks;
  for (int64_t k = 0; k < c.pg_size; ++k)
    ranks.push_back(c.global_rank_start + k * c.global_rank_stride);
  return ranks;
}

// A collective's node, or nullopt when the node records none the replay's
// parsing knows (or only a wait on an earlier one): it stays a COMP_NODE.
std::optional<ExportOp> commOp(const core::Graph& graph, const core::Node& node, std::string* why) {
  core::comm::CollectiveSpec spec;
  try {
    spec = core::comm::readCollective(node, graph.source_path);
  } catch (const InputError& e) {
    *why = fmt::format("a collective the trace does not name ({})", e.what());
    return std::nullopt;
  }
  for (const CollectiveMapping& m : kCollectives) {
    if (m.kind != spec.kind) continue;
    ExportOp op;
    op.type = m.node;
    if (m.node == NodeType::kCommColl) op.collective = m.chakra;
    op.comm_bytes = payloadBytes(graph, node, spec);
    op.pg_name = node.comm ? node.comm->pg_name : "";
    op.pg_ranks = groupRanks(node);
    if (m.node == NodeType::kCommSend) op.peer = intArgument(node, {"dstRank", "dst", "dst_rank"});
    if (m.node == NodeType::kCommRecv) op.peer = intArgument(node, {"srcRank", "src", "src_rank"});
    op.tag = intArgument(node, {"tag"});
    op.why = fmt::format("collective {} ({})", core::comm::collectiveInfo(spec.kind).name,
                         spec.recorded_name);
    return op;
  }
  *why = kWaits;
  return std::nullopt;
}

bool onDevice(const std::string& device) { return device.rfind("cuda", 0) == 0; }
bool onHost(const std::string& device) { return device == "cpu"; }

const core::TensorValue* firstTensor(const std::vector<core::Value>& side, size_t at) {
  if (at >= side.size() || side[at].kind != core::ValueKind::kTensor) return nullptr;
  return &*side[at].tensor;
}

// A copy between host and device memory: MEM_LOAD_NODE (into the device)
// or MEM_STORE_NODE (out of it), with the bytes moved.
std::optional<ExportOp> memoryOp(const core::Node& node) {
  if (!node.schema) return std::nullopt;
  const std::string name = node.schema->qualifiedName();
  const core::TensorValue *src = nullptr, *dst = nullptr;
  if (name == "aten::copy_") {  // copy_(Tensor(a!) self, Tensor src, ...)
    dst = firstTensor(node.inputs, 0);
    src = firstTensor(node.inputs, 1);
  } else if (name == "aten::to" || name == "aten::_to_copy") {
    src = firstTensor(node.inputs, 0);
    dst = firstTensor(node.outputs, 0);
  }
  if (src == nullptr || dst == nullptr) return std::nullopt;
  ExportOp op;
  if (onHost(src->device) && onDevice(dst->device)) {
    op.type = NodeType::kMemLoad;
  } else if (onDevice(src->device) && onHost(dst->device)) {
    op.type = NodeType::kMemStore;
  } else {
    return std::nullopt;
  }
  op.tensor_bytes = src->bytes();
  op.why = fmt::format("{} from {} to {}", name, src->device, dst->device);
  return op;
}

using StorageKey = std::pair<int64_t, std::string>;  // (storage id, device)

template <typename Fn>
void eachStorage(const std::vector<core::Value>& side, Fn&& fn) {
  for (const core::Value& v : side) {
    core::forEachTensor(v, [&](const core::TensorValue& t) {
      if (t.storage_id != 0) fn(StorageKey{t.storage_id, t.device});
    });
  }
}

}  // namespace

core::chakra::ExportPlan buildExportPlan(const core::Graph& graph, const DurationSource& durations,
                                         int64_t rank, int64_t world_size) {
  core::chakra::ExportPlan plan;
  plan.durations_from = durations.name;
  plan.rank = rank;
  plan.world_size = world_size;
  const core::Selection sel = core::selectTopLevelOps(graph);
  std::map<StorageKey, core::NodeId> last_writer;
  std::map<std::string, core::NodeId> last_collective;  // by group name
  core::NodeId latest_collective = core::kNoNode;       // on any group
  core::NodeId previous_compute = core::kNoNode;
  for (core::NodeId id : sel.ops) {
    const core::Node& node = graph.node(id);
    ExportOp op;
    std::string why;
    bool waits = false;  // completes an earlier collective (c10d wait, "wait" records)
    if (node.category == core::NodeCategory::kCommunication) {
      if (auto c = commOp(graph, node, &why)) {
        op = std::move(*c);
      } else {
        waits = why == kWaits;
      }
    } else if (auto m = memoryOp(node)) {
      op = std::move(*m);
    }
    if (op.why.empty()) op.why = why;
    const bool comm = op.type == NodeType::kCommColl || op.type == NodeType::kCommSend ||
                      op.type == NodeType::kCommRecv;
    // Times: a device's where the op has kernels, else the host's.
    auto t = durations.ops.find(id);
    if (t != durations.ops.end()) {
      const bool device = durations.device && t->second.device_us > 0;
      op.duration_us = device ? t->second.device_us : t->second.cpu_us;
      op.on_cpu = !device;
      op.start_us = t->second.start_us;
    } else {
      op.on_cpu = !durations.device;
    }
    // Dependencies: the CPU issues compute ops one after another (threads
    // hand over, as the critical-path simulation has it); an op waits for
    // the last writer of every storage it reads; a collective follows the
    // previous one on its group. Collectives are not in the issue chain:
    // what reads their results waits for them by those storages.
    std::set<core::NodeId> deps;
    if (previous_compute != core::kNoNode) deps.insert(previous_compute);
    eachStorage(node.inputs, [&](const StorageKey& k) {
      auto w = last_writer.find(k);
      if (w != last_writer.end()) deps.insert(w->second);
    });
    // A wait records no group (1.0.1 "wait" records no tensor either): it
    // waits for the latest collective.
    if (waits && latest_collective != core::kNoNode) deps.insert(latest_collective);
    if (comm) {
      const std::string group = op.pg_name;
      auto prev = last_collective.find(group);
      if (prev != last_collective.end()) deps.insert(prev->second);
      last_collective[group] = id;
      latest_collective = id;
    } else {
      previous_compute = id;
    }
    deps.erase(id);
    op.data_deps.assign(deps.begin(), deps.end());
    eachStorage(node.outputs, [&](const StorageKey& k) { last_writer[k] = id; });
    // Collectives write their inputs in place (all_reduce_, broadcast_ ...).
    if (comm) eachStorage(node.inputs, [&](const StorageKey& k) { last_writer[k] = id; });
    plan.ops.emplace(id, std::move(op));
  }
  return plan;
}

}  // namespace tracetwin::cli
