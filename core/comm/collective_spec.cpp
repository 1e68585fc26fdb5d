#include "core/comm/collective_spec.h"

#include <algorithm>

#include "core/errors.h"

namespace tracetwin::core::comm {
namespace {

struct Alias {
  const char* spelling;
  Collective kind;
};

// Spellings seen in traces: record_param_comms names by PyTorch version
// (ProcessGroupNCCL/Gloo RECORD_PARAM_COMMS calls) and c10d op names with
// "c10d::" and the trailing '_' removed.
constexpr Alias kAliases[] = {
    {"allreduce", Collective::kAllReduce},
    {"allreduce_coalesced", Collective::kAllReduce},
    {"allgather", Collective::kAllGather},
    {"allgather_coalesced", Collective::kAllGather},
    {"_allgather_base", Collective::kAllGatherIntoTensor},
    {"allgather_into_tensor_coalesced", Collective::kAllGatherIntoTensor},
    {"_reduce_scatter_base", Collective::kReduceScatterTensor},
    {"reduce_scatter_tensor_coalesced", Collective::kReduceScatterTensor},
    {"alltoall", Collective::kAllToAll},
    {"alltoall_base", Collective::kAllToAllSingle},
    {"all_to_allv", Collective::kAllToAllSingle},
    {"recvAnySource", Collective::kRecv},
    {"recv_any_source", Collective::kRecv},
    {"monitored_barrier", Collective::kBarrier},
};

}  // namespace

const std::vector<CollectiveInfo>& collectives() {
  static const std::vector<CollectiveInfo> kTable = {
      {Collective::kBroadcast, "broadcast", "root's tensors to every rank", false, true},
      {Collective::kAllReduce, "all_reduce", "element-wise reduction, result on every rank", false,
       true},
      {Collective::kReduce, "reduce", "element-wise reduction onto the root", false, true},
      {Collective::kAllGather, "all_gather", "every rank's tensor to every rank, as a list", false,
       true},
      {Collective::kAllGatherIntoTensor, "all_gather_into_tensor", "all_gather into one tensor",
       false, true},
      {Collective::kReduceScatter, "reduce_scatter", "reduce, then rank i keeps chunk i (lists)",
       false, true},
      {Collective::kReduceScatterTensor, "reduce_scatter_tensor", "reduce_scatter on one tensor",
       false, true},
      {Collective::kAllToAll, "all_to_all", "rank i sends chunk j to rank j (lists)", false, true},
      {Collective::kAllToAllSingle, "all_to_all_single",
       "all_to_all on one tensor, optional splits", false, true},
      {Collective::kGather, "gather", "every rank's tensor to the root", false, true},
      {Collective::kScatter, "scatter", "root's chunks to every rank", false, true},
      {Collective::kBarrier, "barrier", "synchronises all ranks", false, false},
      {Collective::kSend, "send", "point-to-point send", true, true},
      {Collective::kRecv, "recv", "point-to-point receive", true, true},
      {Collective::kWait, "wait", "waits on an earlier collective", false, false},
  };
  return kTable;
}

const CollectiveInfo& collectiveInfo(Collective kind) {
  return collectives().at(static_cast<size_t>(kind));
}

const CollectiveInfo* findCollective(std::string_view recorded_name) {
  for (const CollectiveInfo& info : collectives()) {
    if (recorded_name == info.name) return &info;
  }
  for (const Alias& alias : kAliases) {
    if (recorded_name == alias.spelling) return &collectiveInfo(alias.kind);
  }
  return nullptr;
}

std::string knownCollectiveNames() {
  std::vector<std::string> names;
  for (const CollectiveInfo& info : collectives()) names.emplace_back(info.name);
  for (const Alias& alias : kAliases) names.emplace_back(alias.spelling);
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace tracetwin::core::comm

namespace tracetwin::core::comm {
namespace {

std::string nodeContext(const core::Node& node, const std::string& source) {
  return (source.empty() ? "" : source + ": ") + "node " + std::to_string(node.id) + " (" +
         node.name + ")";
}

std::vector<int64_t> intList(const core::Value& v) {
  std::vector<int64_t> out;
  for (const core::Value& e : v.elements) {
    if (e.kind == core::ValueKind::kInt) out.push_back(e.int_value);
  }
  return out;
}

// Positional record_param_comms inputs, by schema (PyTorch's
// RECORD_PARAM_COMMS macro):
//   1.0.1:        [tensors], seq, pg id, rank, name, in_split, out_split
//   1.0.2:        [tensors], seq, pg ptr, rank, name, in_split, out_split, world_size
//   1.0.3..1.1.x: [tensors], seq, (pg_name, pg_desc), rank, name, in_split, out_split,
//                 global_rank_start, global_rank_stride, world_size
// The tensors are absent for "wait"; the name is the first String input and
// the rank (in the group) the input before it.
void readPositional(const core::Node& node, CollectiveSpec& spec) {
  const auto& in = node.inputs;
  size_t s = 0;
  while (s < in.size() && in[s].kind != core::ValueKind::kString) ++s;
  if (s == in.size()) return;
  if (spec.recorded_name.empty()) spec.recorded_name = in[s].string_value;
  if (s >= 1 && in[s - 1].kind == core::ValueKind::kInt) spec.group_rank = in[s - 1].int_value;
  if (s + 2 < in.size()) {
    if (spec.in_split.empty()) spec.in_split = intList(in[s + 1]);
    if (spec.out_split.empty()) spec.out_split = intList(in[s + 2]);
  }
  const size_t trailing = in.size() > s + 3 ? in.size() - (s + 3) : 0;
  const size_t world = trailing == 1 ? s + 3 : trailing == 3 ? s + 5 : in.size();
  if (spec.group_size < 0 && world < in.size() && in[world].kind == core::ValueKind::kInt) {
    spec.group_size = in[world].int_value;
    spec.group_size_from = "positional world size";
  }
}

std::string c10dCollectiveName(const std::string& op_name) {
  std::string name = op_name.substr(std::string("c10d::").size());
  if (!name.empty() && name.back() == '_') name.pop_back();
  return name;
}

bool isBackendLabel(const std::string& name) {
  return name.rfind("gloo:", 0) == 0 || name.rfind("nccl:", 0) == 0;
}

// The c10d dispatcher ops (PyTorch 1.13 and 2.x keep these positions; the
// argument names are not recorded: "_0", "_1"): which argument is sent, and
// where all_to_all_single keeps its split sizes.
void readC10dArguments(const core::Node& node, CollectiveSpec& spec) {
  const bool outputs_first = spec.kind == Collective::kAllGather ||
                             spec.kind == Collective::kAllGatherIntoTensor ||
                             spec.kind == Collective::kReduceScatter ||
                             spec.kind == Collective::kReduceScatterTensor ||
                             spec.kind == Collective::kAllToAll ||
                             spec.kind == Collective::kAllToAllSingle ||
                             spec.kind == Collective::kGather || spec.kind == Collective::kScatter;
  spec.payload_arg = outputs_first ? 1 : 0;
  if (spec.kind == Collective::kAllToAllSingle && node.inputs.size() > 4) {
    spec.out_split = intList(node.inputs[3]);
    spec.in_split = intList(node.inputs[4]);
  }
}

}  // namespace

CollectiveSpec readCollective(const core::Node& node, const std::string& source) {
  CollectiveSpec spec;
  const bool is_c10d = node.name.rfind("c10d::", 0) == 0;
  if (is_c10d) {
    spec.recorded_name = c10dCollectiveName(node.name);
  } else if (isBackendLabel(node.name)) {
    spec.recorded_name = node.name.substr(node.name.find(':') + 1);
  } else if (node.name == "record_param_comms") {
    if (node.comm) {
      spec.recorded_name = node.comm->collective_name;
      spec.in_split = node.comm->in_split_size;
      spec.out_split = node.comm->out_split_size;
      if (node.comm->pg_size >= 0) {
        spec.group_size = node.comm->pg_size;
        spec.group_size_from = "pg_size attribute";
      }
    }
    readPositional(node, spec);
  } else {
    throw InputError(nodeContext(node, source) +
                     ": not a communication node (expected record_param_comms, c10d::* or a gloo:/nccl: "
                     "label)");
  }
  const CollectiveInfo* info = findCollective(spec.recorded_name);
  if (info == nullptr) {
    throw InputError(nodeContext(node, source) + ": unknown collective '" + spec.recorded_name +
                     "'; known: " + knownCollectiveNames());
  }
  spec.kind = info->kind;
  if (is_c10d) readC10dArguments(node, spec);
  for (size_t a = 0; a < node.inputs.size(); ++a) {
    if (spec.payload_arg >= 0 && a != size_t(spec.payload_arg)) continue;
    core::forEachTensor(node.inputs[a],
                        [&](const core::TensorValue& t) { spec.input_tensors += t.defined(); });
  }
  // A single-tensor "all_to_all" is all_to_all_single without splits (older
  // PyTorch recorded both under one name).
  if (spec.kind == Collective::kAllToAll && spec.input_tensors == 1) {
    spec.kind = Collective::kAllToAllSingle;
  }
  if (spec.group_size < 0 && !spec.in_split.empty()) {
    spec.group_size = static_cast<int64_t>(spec.in_split.size());
    spec.group_size_from = "split sizes";
  }
  return spec;
}

std::string whyNotOneRank(const CollectiveSpec& spec) {
  const CollectiveInfo& info = collectiveInfo(spec.kind);
  if (info.needs_peer) {
    return std::string(info.name) + " needs a peer rank and a one-rank group has none; " +
           "needs distributed replay (one tracetwin per rank under torchrun)";
  }
  if (spec.group_size > 1) {
    return "needs distributed replay: the traced process group has " +
           std::to_string(spec.group_size) + " ranks (" + spec.group_size_from +
           "); run one tracetwin per rank under torchrun";
  }
  if (spec.group_size < 0 && spec.kind != Collective::kWait) {
    return "needs distributed replay: the trace does not record the process-group size of this " +
           std::string(info.name) + " (record_param_comms before schema 1.0.2 and c10d:: ops " +
           "do not), so a one-rank replay could misrepresent it";
  }
  if (info.needs_tensor && spec.input_tensors == 0) {
    return std::string(info.name) + " records no input tensor to communicate";
  }
  return "";
}

}  // namespace tracetwin::core::comm
