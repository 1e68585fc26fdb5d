#include "replay/special_ops.h"

#include <fmt/core.h>

#include "core/errors.h"

namespace tracetwin::replay {
namespace {

comm::CommReplayer* commReplayer(SpecialOpContext& context) {
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

void planOneRank(const core::Node& node, SpecialOpContext& context, SpecialOpPlan& plan) {
  comm::CommReplayer* replayer = context.comm.get();
  std::string reason;
  if (!replayer->canReplay(node, &reason)) {
    plan.skip_reason = reason;
    return;
  }
  const core::Node* recorded = &node;  // graph nodes outlive the replay
  plan.run = [replayer, recorded](const std::vector<at::Tensor>& tensors) {
    std::vector<at::Tensor> defined;
    defined.reserve(tensors.size());
    for (const auto& t : tensors) {
      if (t.defined()) defined.push_back(t);
    }
    return replayer->replay(*recorded, defined);
  };
}

// One-rank process groups replay locally; anything wider needs every rank's
// trace replayed together (torchrun-style launch), which this command is not.
SpecialOpPlan planComm(const core::Node& node, SpecialOpContext& context) {
  SpecialOpPlan plan;
  const int64_t pg_size = node.comm ? node.comm->pg_size : -1;
  std::string collective = node.comm ? node.comm->collective_name : "";
  if (collective.empty()) collective = "collective";
  if (pg_size > 1) {
    plan.skip_reason = fmt::format("needs distributed replay: {} over a process group of {} ranks",
                                   collective, pg_size);
  } else if (commReplayer(context)) {
    planOneRank(node, context, plan);  // CommReplayer decides when the size was not recorded
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

const std::vector<std::pair<std::string, SpecialOp>> kRegistry = {
    {"record_param_comms", {"collectives on a one-rank c10d process group", planComm}},
    {"triton", {"Triton kernels (PT2): reported, not replayed", planTriton}},
};

}  // namespace

const std::vector<std::pair<std::string, SpecialOp>>& specialOpRegistry() { return kRegistry; }

const SpecialOp* findSpecialOp(const core::Node& node) {
  std::string key;
  if (node.category == core::NodeCategory::kCommunication) key = "record_param_comms";
  if (node.category == core::NodeCategory::kTriton) key = "triton";
  for (const auto& [name, op] : kRegistry) {
    if (name == key) return &op;
  }
  return nullptr;
}

}  // namespace tracetwin::replay
