#include "tests/support/values.h"

#include <utility>

namespace tracetwin::testing {

core::Value intValue(int64_t x) {
  core::Value v;
  v.kind = core::ValueKind::kInt;
  v.type = "Int";
  v.int_value = x;
  return v;
}

core::Value doubleValue(double x) {
  core::Value v;
  v.kind = core::ValueKind::kDouble;
  v.type = "Double";
  v.double_value = x;
  return v;
}

core::Value boolValue(bool b) {
  core::Value v;
  v.kind = core::ValueKind::kBool;
  v.type = "Bool";
  v.bool_value = b;
  return v;
}

core::Value noneValue() {
  core::Value v;
  v.kind = core::ValueKind::kNone;
  v.type = "None";
  return v;
}

core::Value stringValue(std::string s) {
  core::Value v;
  v.kind = core::ValueKind::kString;
  v.type = "String";
  v.string_value = std::move(s);
  return v;
}

core::Value listValue(std::vector<core::Value> elements, std::string type) {
  core::Value v;
  v.kind = core::ValueKind::kList;
  v.type = std::move(type);
  v.elements = std::move(elements);
  return v;
}

core::Value intListValue(const std::vector<int64_t>& xs, std::string type) {
  std::vector<core::Value> elements;
  for (int64_t x : xs) elements.push_back(intValue(x));
  return listValue(std::move(elements), std::move(type));
}

core::Value intList(const std::vector<int64_t>& xs) { return intListValue(xs, "GenericList[Int]"); }

core::Value tensorList(std::vector<core::Value> tensors, std::string type) {
  return listValue(std::move(tensors), std::move(type));
}

core::Value tensorValue(int64_t id, int64_t storage, std::vector<int64_t> shape,
                        const std::string& dtype, int64_t itemsize, const std::string& device) {
  core::Value v;
  v.kind = core::ValueKind::kTensor;
  v.type = "Tensor(" + dtype + ")";
  v.tensor->tensor_id = id;
  v.tensor->storage_id = storage;
  v.tensor->numel = 1;
  for (int64_t d : shape) v.tensor->numel *= d;
  v.tensor->itemsize = itemsize;
  v.tensor->device = device;
  v.tensor->dtype = core::dtypeFromTraceName(dtype);
  v.tensor->shape = std::move(shape);
  return v;
}

core::Value undefinedTensor(int64_t id) {
  core::Value v;
  v.kind = core::ValueKind::kTensor;
  v.type = "Tensor(nullptr (uninitialized))";
  v.tensor->tensor_id = id;
  return v;
}

core::Value tensor(std::vector<int64_t> shape, core::DType dtype, int64_t storage,
                   std::string device) {
  static int64_t next_id = 1000;
  ++next_id;
  const bool wide = dtype == core::DType::kInt64 || dtype == core::DType::kFloat64;
  const bool half = dtype == core::DType::kFloat16 || dtype == core::DType::kBFloat16;
  core::Value v = tensorValue(next_id, storage ? storage : next_id, std::move(shape),
                              dtype == core::DType::kInt64 ? "long" : "float",
                              wide   ? 8
                              : half ? 2
                                     : 4,
                              device);
  v.tensor->dtype = dtype;  // the trace name above is only "long" or "float"
  return v;
}

core::Value mibTensor(int64_t mib, int64_t storage) {
  return tensor({mib * kMiB / 4}, core::DType::kFloat32, storage, "cpu");
}

}  // namespace tracetwin::testing
