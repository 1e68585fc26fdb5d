// Which collective a communication node records, on how many ranks, with
// which split sizes — read from record_param_comms (attributes from schema
// 1.1.0, positional inputs before) or from c10d:: op names. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/graph.h"

namespace tracetwin::core::comm {

enum class Collective : uint8_t {
  kBroadcast,
  kAllReduce,
  kReduce,
  kAllGather,            // into a list of tensors
  kAllGatherIntoTensor,  // _allgather_base
  kReduceScatter,        // from a list of tensors
  kReduceScatterTensor,  // _reduce_scatter_base
  kAllToAll,             // lists of tensors
  kAllToAllSingle,       // one tensor, optional split sizes (all_to_allv)
  kGather,
  kScatter,
  kBarrier,
  kSend,
  kRecv,
  kWait,  // waits on an earlier collective's work
};

struct CollectiveInfo {
  Collective kind;
  const char* name;  // canonical name, as torch.distributed spells it
  const char* description;
  bool needs_peer;    // point-to-point: meaningless on one rank
  bool needs_tensor;  // refuses a node that records no tensor
};

// Every collective, in enum order.
const std::vector<CollectiveInfo>& collectives();
const CollectiveInfo& collectiveInfo(Collective kind);
// Canonical names and the spellings traces use ("allreduce", "all_to_allv",
// "_allgather_base", c10d op names without "c10d::" and trailing '_').
// nullptr when unknown.
const CollectiveInfo* findCollective(std::string_view recorded_name);
std::string knownCollectiveNames();  // "all_gather, all_reduce, ..." for messages

struct CollectiveSpec {
  Collective kind = Collective::kWait;
  std::string recorded_name;    // as the trace spells it
  int64_t group_size = -1;      // -1: not recorded
  // The recording process's rank in the collective's group (record_param_comms'
  // positional input before the name); -1: not recorded (c10d:: ops, labels).
  int64_t group_rank = -1;
  std::string group_size_from;  // "pg_size attribute", "positional world size", "split sizes"
  std::vector<int64_t> in_split;
  std::vector<int64_t> out_split;
  int input_tensors = 0;  // defined tensors among the payload
  // The input argument that holds the data sent: c10d ops also pass their
  // output buffers as inputs (`c10d::allgather_(Tensor[][] outputs, Tensor[]
  // inputs, ...)`). -1: every tensor input is payload.
  int payload_arg = -1;
};

// Reads a record_param_comms, c10d:: or gloo:/nccl: label node. Throws InputError naming the
// node (and `source`, the trace file) when it records no known collective.
CollectiveSpec readCollective(const core::Node& node, const std::string& source = "");

// Empty when replaying the collective on a one-rank group reproduces it;
// otherwise why not ("needs distributed replay: ...").
std::string whyNotOneRank(const CollectiveSpec& spec);

}  // namespace tracetwin::core::comm
