#include "replay/prepared_op.h"

namespace tracetwin::replay {
namespace {

c10::IValue tensorValue(const TensorArg& arg, SlotTable& slots) {
  switch (arg.kind) {
    case TensorArg::Kind::kTensor: {
      const int32_t s = arg.slots.front();
      if (s >= 0) return slots.get(s);
      return arg.optional ? c10::IValue() : c10::IValue(at::Tensor());
    }
    case TensorArg::Kind::kTensorList: {
      c10::List<at::Tensor> list;
      list.reserve(arg.slots.size());
      for (int32_t s : arg.slots) list.push_back(s >= 0 ? slots.get(s) : at::Tensor());
      return list;
    }
    case TensorArg::Kind::kOptionalTensorList: {
      c10::List<c10::optional<at::Tensor>> list;
      list.reserve(arg.slots.size());
      for (int32_t s : arg.slots) {
        list.push_back(s >= 0 ? c10::optional<at::Tensor>(slots.get(s)) : c10::nullopt);
      }
      return list;
    }
  }
  return c10::IValue();
}

void bindOutputs(PreparedOp& op, SlotTable& slots) {
  for (const OutputBinding& b : op.outputs) {
    if (b.ret >= op.stack.size()) continue;  // fewer results than recorded (substituted op)
    const c10::IValue& r = op.stack[b.ret];
    if (b.element < 0) {
      if (r.isTensor()) slots.bind(b.slot, r.toTensor());
    } else if (r.isTensorList()) {
      auto list = r.toTensorList();
      if (static_cast<size_t>(b.element) < list.size()) slots.bind(b.slot, list.get(b.element));
    }
  }
}

}  // namespace

void callPreparedOp(PreparedOp& op, SlotTable& slots) {
  if (op.special) {
    std::vector<at::Tensor> tensors;
    for (const TensorArg& arg : op.args.tensors) {
      for (int32_t s : arg.slots) tensors.push_back(s >= 0 ? slots.get(s) : at::Tensor());
    }
    const std::vector<at::Tensor> results = op.special(tensors);
    for (const OutputBinding& b : op.outputs) {
      if (b.ret < results.size() && results[b.ret].defined()) slots.bind(b.slot, results[b.ret]);
    }
    return;
  }
  for (PreparedOp& cast : op.casts) {
    callPreparedOp(cast, slots);
    cast.stack.clear();  // its result lives on in its slot
  }
  op.stack.assign(op.args.values.begin(), op.args.values.end());
  for (const TensorArg& arg : op.args.tensors) op.stack[arg.position] = tensorValue(arg, slots);
  op.handle->callBoxed(op.stack);
  bindOutputs(op, slots);
}

}  // namespace tracetwin::replay
