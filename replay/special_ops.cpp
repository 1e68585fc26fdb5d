#include "replay/special_ops.h"

#include <fmt/core.h>

#include "core/errors.h"

namespace tracetwin::replay {
namespace {

comm::CommReplayer* commReplayer(SpecialOpContext& context) {
  if (context.distributed_comm) return context.distributed_comm;
  if (!context.comm_tried) {
    context.comm_tried = true;
    try {
      context.comm = comm::CommReplayer::create(context.device);
    } catch (const Error& e) {
      context.comm_error = e.what();
    }
  }
  return context.comm.get();
}

void planOnGroup(const core::Node& node, comm::CommReplayer* replayer, SpecialOpPlan& plan) {
  std::string reason;
  if (!replayer->canReplay(node, &reason)) {
    plan.skip_reason = reason;
    return;
  }
  const core::Node* recorded = &node;  // graph nodes outlive the replay
  plan.run = [replayer, recorded](const std::vector<at::Tensor>& tensors) {
    return replayer->replay(*recorded, tensors);
  };
}

// A distributed replay runs collectives on its groups. Otherwise one-rank
// process groups replay locally, and anything wider needs every rank's trace
// replayed together (`replay --nproc N`, torchrun), which this run is not.
SpecialOpPlan planComm(const core::Node& node, SpecialOpContext& context) {
  SpecialOpPlan plan;
  const int64_t pg_size = node.comm ? node.comm->pg_size : -1;
  std::string collective = node.comm ? node.comm->collective_name : "";
  if (collective.empty()) collective = "collective";
  if (context.distributed_comm) {
    planOnGroup(node, context.distributed_comm, plan);
  } else if (pg_size > 1) {
    plan.skip_reason = fmt::format(
        "needs distributed replay: {} over a process group of {} ranks (replay --nproc {})",
        collective, pg_size, pg_size);
  } else if (comm::CommReplayer* one_rank = commReplayer(context)) {
    planOnGroup(node, one_rank, plan);  // CommReplayer decides when the size was not recorded
  } else if (pg_size < 0) {
    plan.skip_reason = fmt::format(
        "needs distributed replay: {} with process-group size not recorded (schema < 1.1.0)",
        collective);
  } else {
    plan.skip_reason = "communication replay unavailable: " + context.comm_error;
  }
  return plan;
}

SpecialOpPlan planTriton(const core::Node& node, SpecialOpContext& /*context*/) {
  SpecialOpPlan plan;
  plan.skip_reason =
      node.kernel_file.empty()
          ? "Triton kernel: its source is not in the trace"
          : fmt::format("Triton kernel: source {} is not available to LibTorch replay",
                        node.kernel_file);
  return plan;
}

// Tells the CUDA caching allocator a tensor is in use on another stream (the
// DLRM traces: 14 per iteration, on their batch copies). A CPU tensor has no
// stream and LibTorch registers no CPU kernel for it: on a CPU replay the op
// is nothing, and the report says so. On CUDA it goes to the dispatcher.
SpecialOpPlan planRecordStream(const core::Node& /*node*/, SpecialOpContext& /*context*/) {
  SpecialOpPlan plan;
  plan.run = [](const std::vector<at::Tensor>&) { return std::vector<at::Tensor>{}; };
  plan.substituted_by = "nothing (CPU tensors have no streams)";
  return plan;
}

const std::vector<std::pair<std::string, SpecialOp>> kRegistry = {
    {"record_param_comms",
     {"collectives on c10d process groups (one rank, or the ranks of a distributed replay)",
      planComm}},
    {"triton", {"Triton kernels (PT2): reported, not replayed", planTriton}},
    {"aten::record_stream", {"stream bookkeeping: nothing on a CPU", planRecordStream}},
};

}  // namespace

const std::vector<std::pair<std::string, SpecialOp>>& specialOpRegistry() { return kRegistry; }

const SpecialOp* findSpecialOp(const core::Node& node, const SpecialOpContext& context) {
  std::string key;
  if (node.category == core::NodeCategory::kCommunication) key = "record_param_comms";
  if (node.category == core::NodeCategory::kTriton) key = "triton";
  if (context.device == "cpu" && node.name == "aten::record_stream") key = node.name;
  for (const auto& [name, op] : kRegistry) {
    if (name == key) return &op;
  }
  return nullptr;
}

}  // namespace tracetwin::replay
