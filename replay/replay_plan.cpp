#include "replay/replay_plan.h"

#include <fmt/core.h>

#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "core/autocast.h"
#include "core/device_twins.h"
#include "core/errors.h"
#include "core/op_family.h"
#include "replay/op_resolver.h"
#include "replay/stride_hints.h"

namespace tracetwin::replay {
namespace {

// Every defined tensor must have a dtype LibTorch knows; else the op is skipped.
void requireKnownDtypes(const core::Node& node, const TensorPlan& tensors) {
  auto check = [&](const std::vector<core::Value>& values) {
    for (const auto& v : values) {
      core::forEachTensor(v, [&](const core::TensorValue& t) {
        if (tensors.replayable(t) && t.dtype == core::DType::kUnknown) {
          throw ConversionError(
              fmt::format("tensor {} has an element type replay does not know", t.tensor_id));
        }
      });
    }
  };
  check(node.inputs);
  check(node.outputs);
}

void bindRecordedOutputs(const core::Node& node, int64_t index, TensorPlan& tensors,
                         PreparedOp& op) {
  for (size_t r = 0; r < node.outputs.size(); ++r) {
    const core::Value& out = node.outputs[r];
    if (out.kind == core::ValueKind::kTensor) {
      if (tensors.replayable(out.tensor)) {
        op.outputs.push_back({uint32_t(r), -1, tensors.defineOutput(out.tensor, index)});
      }
    } else if (out.kind == core::ValueKind::kList) {
      for (size_t e = 0; e < out.elements.size(); ++e) {
        const core::Value& el = out.elements[e];
        if (el.kind == core::ValueKind::kTensor && tensors.replayable(el.tensor)) {
          op.outputs.push_back({uint32_t(r), int32_t(e), tensors.defineOutput(el.tensor, index)});
        }
      }
    }
  }
}

// Special ops take every recorded input tensor, flattened, in order.
void planSpecialTensors(const core::Node& node, int64_t index, TensorPlan& tensors,
                        PreparedOp& op) {
  TensorArg all;
  all.kind = TensorArg::Kind::kTensorList;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    core::forEachTensor(node.inputs[i], [&](const core::TensorValue& t) {
      all.slots.push_back(tensors.replayable(t) ? tensors.useInput(t, index, int32_t(i)) : -1);
    });
  }
  op.args.tensors.push_back(std::move(all));
  uint32_t flat = 0;
  for (const auto& out : node.outputs) {
    core::forEachTensor(out, [&](const core::TensorValue& t) {
      if (tensors.replayable(t)) op.outputs.push_back({flat, -1, tensors.defineOutput(t, index)});
      ++flat;
    });
  }
}

// Where a tensor recorded among `node`'s inputs sits there: (input, element).
std::pair<int32_t, int32_t> inputPosition(const core::Node& node, const core::TensorValue& t) {
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const core::Value& v = node.inputs[i];
    if (v.isTensor() && v.tensor->tensor_id == t.tensor_id &&
        v.tensor->storage_id == t.storage_id && v.tensor->dtype == t.dtype)
      return {int32_t(i), -1};
    for (size_t e = 0; e < v.elements.size(); ++e) {
      const core::Value& el = v.elements[e];
      if (el.isTensor() && el.tensor->tensor_id == t.tensor_id &&
          el.tensor->storage_id == t.storage_id && el.tensor->dtype == t.dtype)
        return {int32_t(i), int32_t(e)};
    }
  }
  return {-1, -1};
}

class PlanBuilder {
 public:
  PlanBuilder(const core::Graph& graph, const DeviceMap& devices, SpecialOpContext& context,
              const TensorPlan& plan_tensors)
      : graph_(graph), devices_(devices), context_(context), plan_tensors_(plan_tensors) {}

  void add(const core::Node& recorded, int64_t index, ReplayPlan& plan) {
    PreparedOp op;
    op.index = index;
    op.id = recorded.id;
    op.name = recorded.name;
    op.family = core::opFamily(recorded);
    const core::Node* node = substitute(recorded, plan, op);
    plan.nodes.push_back(node);
    if (op.skip_reason.empty()) {
      // A twin is not autocast's inner call: substituted ops replay as rewritten.
      auto autocast = node == &recorded ? core::findAutocastCall(graph_, recorded) : std::nullopt;
      if (autocast) {
        prepareAutocast(recorded, *autocast, index, plan, op);
      } else {
        prepare(*node, index, plan, op);
      }
    }
    if (!op.skip_reason.empty()) plan.skipped.push_back({op.id, op.name, op.skip_reason});
    plan.ops.push_back(std::move(op));
  }

 private:
  const core::Node* substitute(const core::Node& recorded, ReplayPlan& plan, PreparedOp& op) {
    try {
      auto twin = core::substituteForDevice(recorded, devices_.target.is_cpu());
      if (!twin) return &recorded;
      plan.substitutions.push_back({recorded.id, recorded.schema->qualifiedName(), twin->name});
      plan.twins.push_back(std::move(*twin));
      return &plan.twins.back();
    } catch (const InputError& e) {
      op.skip_reason = fmt::format("no generic twin: {}", e.what());
      return &recorded;
    }
  }

  void prepare(const core::Node& node, int64_t index, ReplayPlan& plan, PreparedOp& op) {
    if (const SpecialOp* special = findSpecialOp(node, context_)) {
      SpecialOpPlan sp = special->plan(node, context_);
      op.skip_reason = sp.skip_reason;
      if (!sp.substituted_by.empty()) {
        plan.substitutions.push_back({node.id, node.name, sp.substituted_by});
      }
      if (op.skip_reason.empty()) {
        op.special = std::move(sp.run);
        planSpecialTensors(node, index, plan.tensors, op);
      }
      return;
    }
    auto resolved = resolveCall(node, op);
    if (resolved) registerCall(node, *resolved, index, plan, op, nullptr);
  }

  // The casts, then the inner call, as one op (see PreparedOp::casts). A cast
  // reads one of the outer node's inputs: its use is registered at that
  // input's position in the outer node, so the value generators see the
  // argument the model passed (a linear's weight, not an aten::to's self).
  void prepareAutocast(const core::Node& outer, const core::AutocastCall& call, int64_t index,
                       ReplayPlan& plan, PreparedOp& op) {
    std::vector<PreparedOp> casts;
    std::vector<ResolvedOp> resolved_casts;
    for (core::NodeId id : call.casts) {
      const core::Node& cast = graph_.node(id);
      PreparedOp sub;
      sub.index = index;
      sub.id = id;
      sub.name = cast.name;
      sub.family = core::opFamily(cast);
      auto resolved = resolveCall(cast, sub);
      if (!resolved) {
        op.skip_reason = fmt::format("autocast cast {} ({}): {}", id, cast.name, sub.skip_reason);
        return;
      }
      casts.push_back(std::move(sub));
      resolved_casts.push_back(std::move(*resolved));
    }
    const core::Node& inner = graph_.node(call.inner);
    auto resolved = resolveCall(inner, op);
    if (!resolved) return;
    for (size_t c = 0; c < casts.size(); ++c) {
      const core::Node& cast = graph_.node(call.casts[c]);
      registerCall(cast, resolved_casts[c], index, plan, casts[c], &outer);
    }
    op.casts = std::move(casts);
    registerCall(inner, *resolved, index, plan, op, nullptr);
  }

  // Resolution and a dry run of the argument conversion: nothing is
  // registered with the tensor plan unless every call of the op converts.
  std::optional<ResolvedOp> resolveCall(const core::Node& node, PreparedOp& op) {
    std::string reason;
    auto resolved = resolver_.resolve(node, &reason);
    if (!resolved) {
      op.skip_reason = reason;
      return std::nullopt;
    }
    try {
      requireKnownDtypes(node, plan_tensors_);
      buildArguments(
          node, resolved->handle.schema(), resolved->recorded_index, devices_,
          [](const core::TensorValue&, int32_t, int32_t) { return -1; },
          [&](const core::TensorValue& t) { return plan_tensors_.replayable(t); });
    } catch (const ConversionError& e) {
      op.skip_reason = e.what();
      return std::nullopt;
    } catch (const c10::Error& e) {
      op.skip_reason = fmt::format("argument conversion failed: {}", e.what_without_backtrace());
      return std::nullopt;
    }
    return resolved;
  }

  // `uses_of`: the node whose input positions the uses are registered at
  // (null: `node`'s own).
  void registerCall(const core::Node& node, const ResolvedOp& resolved, int64_t index,
                    ReplayPlan& plan, PreparedOp& op, const core::Node* uses_of) {
    op.args = buildArguments(
        node, resolved.handle.schema(), resolved.recorded_index, devices_,
        [&](const core::TensorValue& t, int32_t arg, int32_t element) {
          if (uses_of) std::tie(arg, element) = inputPosition(*uses_of, t);
          return plan.tensors.useInput(t, index, arg, element);
        },
        [&](const core::TensorValue& t) { return plan.tensors.replayable(t); });
    if (!resolved.mapping.empty()) plan.overload_mappings.push_back(resolved.mapping);
    op.handle = resolved.handle;
    bindRecordedOutputs(node, index, plan.tensors, op);
  }

  const core::Graph& graph_;
  const DeviceMap& devices_;
  SpecialOpContext& context_;
  const TensorPlan& plan_tensors_;  // the plan's, for which recorded tensors get slots
  OpResolver resolver_;
};

// Upfront tensors with no recorded strides take those of the as_strided call
// that made them in the original run, when the trace has one.
void inferUpfrontStrides(const core::Graph& graph, const std::vector<core::NodeId>& selected,
                         TensorPlan& tensors) {
  const auto& slots = tensors.slots();
  bool any_missing = false;
  for (const auto& s : slots)
    any_missing |= s.upfront && s.meta.strides.empty() && s.meta.shape.size() > 1;
  if (!any_missing) return;
  const StrideHints hints = StrideHints::fromGraph(graph);
  if (hints.size() == 0) return;
  for (size_t i = 0; i < slots.size(); ++i) {
    const SlotInfo& s = slots[i];
    if (!s.upfront || !s.meta.strides.empty() || s.first_op < 0) continue;
    if (auto strides = hints.lookup(s.meta, selected[static_cast<size_t>(s.first_op)]))
      tensors.setUpfrontStrides(int32_t(i), std::move(*strides));
  }
}

// The slot an in-place chain started from: while `slot` was produced by an
// op whose `self` is the same recorded tensor (mul_, addcmul_ ...), step back
// to that input.
int32_t inPlaceOrigin(const ReplayPlan& plan, int32_t slot) {
  const auto& slots = plan.tensors.slots();
  for (;;) {
    const SlotInfo& info = slots[size_t(slot)];
    if (info.upfront || info.def_op < 0) return slot;
    int32_t self = -1;
    for (const TensorArg& arg : plan.ops[size_t(info.def_op)].args.tensors) {
      if (arg.position == 0 && arg.slots.size() == 1) self = arg.slots[0];
    }
    if (self < 0 || self == slot) return slot;
    const core::TensorValue& a = info.meta;
    const core::TensorValue& b = slots[size_t(self)].meta;
    if (a.tensor_id != b.tensor_id || a.storage_id != b.storage_id || a.offset != b.offset ||
        a.numel != b.numel)
      return slot;
    slot = self;
  }
}

// Upfront tensors whose square root or logarithm an op takes (Adam's
// exp_avg_sq, updated in place and then `sqrt`): at [-1, 1) half of them
// became NaN, and the next iteration's forward ran on NaN weights.
void markNonNegativeInputs(ReplayPlan& plan) {
  static const std::set<std::string> kNonNegativeDomain = {
      "aten::sqrt", "aten::sqrt_", "aten::rsqrt", "aten::rsqrt_", "aten::log",
      "aten::log_", "aten::log2",  "aten::log2_", "aten::log10",  "aten::log10_"};
  for (const PreparedOp& op : plan.ops) {
    if (!op.runnable() || kNonNegativeDomain.count(op.name) == 0) continue;
    for (const TensorArg& arg : op.args.tensors) {
      if (arg.position != 0) continue;  // self
      for (int32_t slot : arg.slots) {
        if (slot >= 0) plan.tensors.markNonNegative(inPlaceOrigin(plan, slot));
      }
    }
  }
}

}  // namespace

ReplayPlan buildReplayPlan(const core::Graph& graph, const std::vector<core::NodeId>& selected,
                           const DeviceMap& devices, SpecialOpContext& context) {
  ReplayPlan plan;
  // Before any op: sparse gradients are recorded like undefined tensors.
  plan.tensors.setSparseTensors(core::inferSparseTensors(graph));
  PlanBuilder builder(graph, devices, context, plan.tensors);
  std::vector<const std::vector<core::Value>*> inputs;
  std::vector<const std::vector<core::Value>*> outputs;
  std::deque<std::vector<core::Value>> with_casts;  // an autocast op's outputs and its casts'
  for (size_t i = 0; i < selected.size(); ++i) {
    const core::Node& node = graph.node(selected[i]);
    builder.add(node, int64_t(i), plan);
    inputs.push_back(&node.inputs);
    outputs.push_back(&node.outputs);
    // The copies an autocast op's casts make live on after it, as in the replay.
    if (const PreparedOp& op = plan.ops.back(); !op.casts.empty()) {
      with_casts.push_back(node.outputs);
      for (const PreparedOp& cast : op.casts) {
        const auto& cast_outputs = graph.node(cast.id).outputs;
        with_casts.back().insert(with_casts.back().end(), cast_outputs.begin(), cast_outputs.end());
      }
      outputs.back() = &with_casts.back();
    }
  }
  inferUpfrontStrides(graph, selected, plan.tensors);
  plan.tensors.markTransients();
  markNonNegativeInputs(plan);
  const auto& slots = plan.tensors.slots();
  for (size_t s = 0; s < slots.size(); ++s) {
    if (!slots[s].transient) continue;
    for (int64_t op : slots[s].scalar_reads)
      plan.ops[size_t(op)].transient_inputs.push_back(int32_t(s));
  }
  auto releases = plan.tensors.releaseLists(int64_t(plan.ops.size()));
  for (size_t i = 0; i < plan.ops.size(); ++i) plan.ops[i].release_after = std::move(releases[i]);
  plan.trace_peak_bytes = tracePeakBytes(inputs, outputs);
  return plan;
}

}  // namespace tracetwin::replay
