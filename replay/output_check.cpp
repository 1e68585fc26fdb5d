#include "replay/output_check.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "replay/ivalue_conversion.h"

namespace tracetwin::replay {

std::string describeMismatch(const at::Tensor& t, const core::TensorValue& recorded) {
  if (!t.defined()) return "";
  if (recorded.dtype != core::DType::kUnknown) {
    const at::ScalarType want = scalarTypeOf(recorded.dtype);
    if (t.scalar_type() != want) {
      return fmt::format("dtype {} recorded, {} replayed", c10::toString(want),
                         c10::toString(t.scalar_type()));
    }
  }
  const std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
  if (shape != recorded.shape) {
    return fmt::format("shape [{}] recorded, [{}] replayed", fmt::join(recorded.shape, ", "),
                       fmt::join(shape, ", "));
  }
  if (recorded.strides.size() == shape.size()) {
    // A dimension of size 0 or 1 is never stepped over: its stride is free.
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] > 1 && t.stride(int64_t(d)) != recorded.strides[d]) {
        const std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
        return fmt::format("strides [{}] recorded, [{}] replayed",
                           fmt::join(recorded.strides, ", "), fmt::join(strides, ", "));
      }
    }
  }
  return "";
}

std::string outputMismatch(const PreparedOp& op, const TensorPlan& plan, const SlotTable& slots) {
  for (const PreparedOp& cast : op.casts) {
    std::string m = outputMismatch(cast, plan, slots);
    if (!m.empty()) return fmt::format("autocast cast {}: {}", cast.id, m);
  }
  for (const OutputBinding& b : op.outputs) {
    const at::Tensor& t = slots.peek(b.slot);
    if (!t.defined()) continue;
    std::string m = describeMismatch(t, plan.slots()[size_t(b.slot)].meta);
    if (m.empty()) continue;
    return b.element < 0 ? fmt::format("output {}: {}", b.ret, m)
                         : fmt::format("output {}[{}]: {}", b.ret, b.element, m);
  }
  return "";
}

}  // namespace tracetwin::replay
