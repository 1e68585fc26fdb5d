#include "replay/direct_dispatch.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/core.h>

#include <chrono>

#include "core/errors.h"
#include "replay/replay_plan.h"
#include "replay/slot_table.h"

namespace tracetwin::replay {
namespace {

// The op's stack with every tensor bound once, from the materialised slots.
std::vector<c10::IValue> fixedStack(PreparedOp& op, SlotTable& slots) {
  std::vector<c10::IValue> stack = op.args.values;
  for (const TensorArg& arg : op.args.tensors) {
    if (arg.kind == TensorArg::Kind::kTensor) {
      const int32_t s = arg.slots.front();
      stack[arg.position] = s >= 0 ? c10::IValue(slots.get(s))
                                   : (arg.optional ? c10::IValue() : c10::IValue(at::Tensor()));
    } else {
      c10::List<at::Tensor> list;
      for (int32_t s : arg.slots) list.push_back(s >= 0 ? slots.get(s) : at::Tensor());
      stack[arg.position] = list;
    }
  }
  return stack;
}

}  // namespace

DirectDispatchTiming timeDirectDispatch(const core::Graph& graph, int warmup_iters,
                                        int measured_iters, int threads) {
  if (threads > 0) at::set_num_threads(threads);
  at::NoGradGuard no_grad;
  DeviceMap devices;
  SpecialOpContext context;
  context.device = "cpu";
  const core::Selection selection = core::selectTopLevelOps(graph);
  ReplayPlan plan = buildReplayPlan(graph, selection.ops, devices, context);
  SlotTable slots(plan.tensors, devices);
  slots.materialiseUpfront(plan.nodes, 1234);

  // Transient inputs (wrapped Python numbers) are created per call here too,
  // so the replay loop is compared with a loop doing the same work.
  struct Call {
    c10::OperatorHandle handle;
    std::vector<c10::IValue> stack;
    std::vector<std::pair<size_t, int32_t>> transients;  // stack position, slot
  };
  std::vector<Call> calls;
  for (PreparedOp& op : plan.ops) {
    if (!op.runnable() || !op.handle) continue;
    for (int32_t s : op.transient_inputs) slots.createTransient(s);
    for (PreparedOp& cast : op.casts) calls.push_back({*cast.handle, fixedStack(cast, slots), {}});
    Call call{*op.handle, fixedStack(op, slots), {}};
    for (const TensorArg& arg : op.args.tensors) {
      if (arg.kind != TensorArg::Kind::kTensor) continue;  // wrapped numbers are never in lists
      for (int32_t s : op.transient_inputs) {
        if (arg.slots.front() == s) call.transients.emplace_back(arg.position, s);
      }
    }
    calls.push_back(std::move(call));
  }
  DirectDispatchTiming timing;
  timing.ops = int64_t(calls.size());
  c10::Stack stack;
  for (int it = 0; it < warmup_iters + measured_iters; ++it) {
    const auto t0 = std::chrono::steady_clock::now();
    for (Call& call : calls) {
      stack.assign(call.stack.begin(), call.stack.end());  // callBoxed consumes its stack
      for (const auto& [position, slot] : call.transients) {
        slots.createTransient(slot);
        stack[position] = slots.get(slot);
      }
      try {
        call.handle.callBoxed(stack);
      } catch (const c10::Error& e) {
        throw RuntimeFailure(fmt::format("direct dispatch of {} failed: {}",
                                         call.handle.schema().name(), e.what_without_backtrace()));
      }
    }
    const auto t1 = std::chrono::steady_clock::now();
    if (it >= warmup_iters) {
      timing.iterations_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
  }
  return timing;
}

}  // namespace tracetwin::replay
