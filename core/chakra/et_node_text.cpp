#include "core/chakra/et_node_text.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace tracetwin::core::chakra {
namespace {

using nlohmann::json;

// The inverse of core/trace_values.cpp's ValueBuilder::readValue.
json valueJson(const Value& v) {
  switch (v.kind) {
    case ValueKind::kInt:
      return v.int_value;
    case ValueKind::kDouble:
      // JSON has no inf/nan; the observer writes them as quoted strings.
      if (std::isnan(v.double_value)) return "nan";
      if (std::isinf(v.double_value)) return v.double_value > 0 ? "inf" : "-inf";
      return v.double_value;
    case ValueKind::kBool:
      return v.bool_value;
    case ValueKind::kString:
    case ValueKind::kDevice:
      return v.string_value.str();
    case ValueKind::kScalarType:
    case ValueKind::kLayout:
    case ValueKind::kMemoryFormat:
      // An Int code, or the text of another form.
      if (v.string_value.empty()) return v.int_value;
      return v.string_value.str();
    case ValueKind::kTensor: {
      const TensorValue& t = *v.tensor;
      json a = json::array({t.tensor_id, t.storage_id, t.offset, t.numel, t.itemsize});
      if (!t.device.empty()) a.push_back(t.device);
      return a;
    }
    case ValueKind::kList:
    case ValueKind::kTuple: {
      json a = json::array();
      for (const Value& e : v.elements) a.push_back(valueJson(e));
      return a;
    }
    case ValueKind::kNone:
    case ValueKind::kGenerator:
    case ValueKind::kObject:
      // Kept as their raw text ("<None>", "null", "<Object>"): a string
      // reads back to the same text.
      return v.string_value.str();
  }
  return nullptr;
}

json dimsJson(const Value& v, bool strides, bool* any) {
  if (v.kind == ValueKind::kTensor) {
    const std::vector<int64_t>& dims = strides ? v.tensor->strides : v.tensor->shape;
    *any = *any || !dims.empty();
    return dims;
  }
  if (v.kind == ValueKind::kList || v.kind == ValueKind::kTuple) {
    json a = json::array();
    for (const Value& e : v.elements) a.push_back(dimsJson(e, strides, any));
    return a;
  }
  return json::array();
}

}  // namespace

SideText sideText(const std::vector<Value>& side) {
  json values = json::array(), shapes = json::array(), strides = json::array(),
       types = json::array();
  bool any_shape = false, any_stride = false;
  for (const Value& v : side) {
    values.push_back(valueJson(v));
    shapes.push_back(dimsJson(v, false, &any_shape));
    strides.push_back(dimsJson(v, true, &any_stride));
    types.push_back(v.type);
  }
  SideText t;
  t.values = values.dump();
  t.shapes = shapes.dump();
  t.types = types.dump();
  if (any_stride) t.strides = strides.dump();
  return t;
}

}  // namespace tracetwin::core::chakra
