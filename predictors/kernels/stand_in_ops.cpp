#include "predictors/kernels/stand_in_ops.h"

#include <utility>

#include "predictors/kernels/node_args.h"

namespace tracetwin::predictors {

core::Node standInNode(std::string name, std::vector<core::Value> inputs,
                       std::vector<core::Value> outputs) {
  core::Node n;
  n.name = std::move(name);
  n.category = core::NodeCategory::kAtenCompute;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

core::Value standInTensor(const core::TensorValue& like, std::vector<int64_t> shape,
                          std::vector<int64_t> strides) {
  core::Value v;
  v.kind = core::ValueKind::kTensor;
  v.type = "Tensor";
  core::TensorValue& t = *v.tensor;
  t.dtype = like.dtype;
  t.itemsize = like.itemsize;
  t.device = like.device;
  t.numel = static_cast<int64_t>(product(shape));
  t.shape = std::move(shape);
  t.strides = std::move(strides);
  return v;
}

}  // namespace tracetwin::predictors
