#include "replay/special_ops.h"

#include <fmt/core.h>

#include <memory>
#include <optional>

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

// Mode 1: the compiled kernel itself, launched on the current stream with
// the replay's tensors. Triton nodes record no outputs: the kernel writes
// into buffers its inputs name, which other ops made and read.
SpecialOpPlan planTriton(const core::Node& node, SpecialOpContext& context) {
  SpecialOpPlan plan;
  std::string why = "no compiled-kernel support in this replay";
  std::optional<compiled::PreparedLaunch> prepared;
  if (context.compiled != nullptr) prepared = context.compiled->prepare(node, &why);
  if (!prepared) {
    plan.skip_reason = fmt::format("Triton kernel not launched: {}", why);
    return plan;
  }
  struct Launch {
    compiled::KernelDevice* device;
    compiled::PreparedLaunch prepared;
    std::vector<uint64_t> values;  // one slot per parameter; scalars set once
    std::vector<void*> pointers;   // &values[i], what cuLaunchKernel reads
  };
  auto launch = std::make_shared<Launch>();
  launch->device = context.compiled->device();
  launch->prepared = std::move(*prepared);
  const auto& params = launch->prepared.plan.params;
  launch->values.assign(params.size(), 0);
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].kind == compiled::LaunchParam::Kind::kScalar) launch->values[i] = params[i].bits;
    launch->pointers.push_back(&launch->values[i]);
  }
  const std::string name = node.name;
  plan.run = [launch, name](const std::vector<at::Tensor>& tensors) {
    const auto& plan_params = launch->prepared.plan.params;
    for (size_t i = 0; i < plan_params.size(); ++i) {
      if (plan_params[i].kind != compiled::LaunchParam::Kind::kTensor) continue;
      const auto t = static_cast<size_t>(plan_params[i].tensor);
      // A null pointer the kernel dereferences would fault the whole device
      // context (sticky): refuse the call instead.
      if (t >= tensors.size() || !tensors[t].defined()) {
        throw std::runtime_error(fmt::format("launching {}: its argument {} has no tensor", name,
                                             plan_params[i].name));
      }
      launch->values[i] = reinterpret_cast<uint64_t>(tensors[t].data_ptr());
    }
    if (launch->prepared.plan.empty) return std::vector<at::Tensor>{};
    try {
      launch->device->launch(launch->prepared.kernel, launch->prepared.plan,
                             launch->pointers.data());
    } catch (const RuntimeFailure& e) {
      // A failed launch is this op's failure, reported like any other.
      throw std::runtime_error(fmt::format("launching {}: {}", name, e.what()));
    }
    return std::vector<at::Tensor>{};
  };
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
    {"triton",
     {"Triton kernels of compiled steps: launched from Inductor's cache, else stood in for",
      planTriton}},
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
