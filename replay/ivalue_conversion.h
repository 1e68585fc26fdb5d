// Recorded argument values -> c10::IValues for a registered schema.
// Replay-private: includes LibTorch headers; never include from other layers.
#pragma once

#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/graph.h"

namespace tracetwin::replay {

// Recorded devices -> replay devices. On a CPU target everything lands on the
// CPU; on cuda:N recorded GPUs map to cuda:N, and host tensors of a GPU trace
// stay on the host (a CPU-only trace moves wholesale to the GPU).
struct DeviceMap {
  c10::Device target{c10::kCPU};
  bool trace_has_cuda = false;
  c10::Device map(const std::string& recorded) const;
};

// A tensor-valued argument, filled from the slot table at every call.
struct TensorArg {
  enum class Kind : uint8_t { kTensor, kTensorList, kOptionalTensorList };
  size_t position = 0;
  Kind kind = Kind::kTensor;
  bool optional = false;       // kTensor: an unbound slot becomes None, not an undefined tensor
  std::vector<int32_t> slots;  // -1: undefined tensor / None element
};

struct ArgumentPlan {
  std::vector<c10::IValue> values;  // one per schema argument; tensors filled at call time
  std::vector<TensorArg> tensors;
};

// Why an argument could not be converted; the op is skipped with this reason.
class ConversionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Returns the slot of a recorded tensor (-1 for an undefined one); `arg` and
// `element` locate it in the node's inputs.
using SlotResolver = std::function<int32_t(const core::TensorValue&, int32_t arg, int32_t element)>;
// Which recorded tensors get a slot (empty: the defined ones; the replay plan
// adds the trace's sparse tensors, recorded without storage).
using TensorFilter = std::function<bool(const core::TensorValue&)>;

// recorded_index[k]: index into node.inputs for schema argument k, or -1 to
// use the argument's registered default. Throws ConversionError.
ArgumentPlan buildArguments(const core::Node& node, const c10::FunctionSchema& schema,
                            const std::vector<int>& recorded_index, const DeviceMap& devices,
                            const SlotResolver& slot_of, const TensorFilter& replayable = {});

at::ScalarType scalarTypeOf(core::DType dtype);  // throws ConversionError for kUnknown

}  // namespace tracetwin::replay
