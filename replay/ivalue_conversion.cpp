#include "replay/ivalue_conversion.h"

#include <ATen/core/jit_type.h>
#include <fmt/core.h>

namespace tracetwin::replay {
namespace {

using core::Value;
using core::ValueKind;

[[noreturn]] void fail(const Value& v, const c10::TypePtr& type, const char* why) {
  throw ConversionError(
      fmt::format("cannot pass recorded '{}' as {}: {}", v.type, type->str(), why));
}

int64_t asInt(const Value& v, const c10::TypePtr& type) {
  switch (v.kind) {
    case ValueKind::kInt:
    case ValueKind::kScalarType:
    case ValueKind::kLayout:
    case ValueKind::kMemoryFormat:
      return v.int_value;
    case ValueKind::kBool:
      return v.bool_value ? 1 : 0;
    case ValueKind::kDouble:
      return static_cast<int64_t>(v.double_value);
    default:
      fail(v, type, "not an integer");
  }
}

double asDouble(const Value& v, const c10::TypePtr& type) {
  if (v.kind == ValueKind::kDouble) return v.double_value;
  return static_cast<double>(asInt(v, type));
}

// Scalar ("Number"): keep the recorded kind, it decides type promotion.
c10::IValue asScalar(const Value& v, const c10::TypePtr& type) {
  if (v.kind == ValueKind::kDouble) return v.double_value;
  if (v.kind == ValueKind::kBool) return v.bool_value;
  return asInt(v, type);
}

c10::IValue convert(const Value& v, const c10::TypePtr& type, const DeviceMap& devices);

c10::IValue convertList(const Value& v, const c10::ListTypePtr& type, const DeviceMap& devices,
                        size_t fixed_size) {
  const c10::TypePtr& elem = type->getElementType();
  // "int[2] stride=1" may be recorded as a bare Int: broadcast it.
  if (v.kind != ValueKind::kList && v.kind != ValueKind::kTuple) {
    if (elem->kind() == c10::TypeKind::IntType || elem->kind() == c10::TypeKind::SymIntType) {
      return c10::List<int64_t>(std::vector<int64_t>(fixed_size ? fixed_size : 1, asInt(v, elem)));
    }
    fail(v, type, "expected a list");
  }
  switch (elem->kind()) {
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType: {
      c10::List<int64_t> out;
      for (const Value& e : v.elements) out.push_back(asInt(e, elem));
      return out;
    }
    case c10::TypeKind::FloatType: {
      c10::List<double> out;
      for (const Value& e : v.elements) out.push_back(asDouble(e, elem));
      return out;
    }
    case c10::TypeKind::BoolType: {
      c10::List<bool> out;
      for (const Value& e : v.elements) out.push_back(asInt(e, elem) != 0);
      return out;
    }
    default: {
      c10::impl::GenericList out(elem);
      for (const Value& e : v.elements) out.push_back(convert(e, elem, devices));
      return out;
    }
  }
}

// A recorded enum code (ScalarType, Layout, MemoryFormat) LibTorch can take:
// 0 <= code < count, and not `invalid`.
int64_t asEnum(const Value& v, const c10::TypePtr& type, int64_t count, int64_t invalid) {
  const int64_t code = asInt(v, type);
  if (code < 0 || code >= count || code == invalid) {
    const int64_t last = invalid == count - 1 ? count - 2 : count - 1;
    throw ConversionError(
        fmt::format("cannot pass recorded '{}' {} as {}: not a code LibTorch "
                    "knows (0 to {})",
                    v.type, code, type->str(), last));
  }
  return code;
}

c10::IValue convert(const Value& v, const c10::TypePtr& type, const DeviceMap& devices) {
  using K = c10::TypeKind;
  if (v.kind == ValueKind::kGenerator) return c10::IValue();  // Generator? -> default generator
  switch (type->kind()) {
    case K::OptionalType:
      if (v.kind == ValueKind::kNone) return c10::IValue();
      return convert(v, type->castRaw<c10::OptionalType>()->getElementType(), devices);
    case K::IntType:
    case K::SymIntType:
      return asInt(v, type);
    // Enum codes out of their range crashed LibTorch (a segfault for dtype
    // -1 or 255, "Unsupported TypeMeta" for 30): refused as this op's.
    case K::ScalarTypeType:
      return asEnum(v, type, static_cast<int64_t>(c10::ScalarType::NumOptions),
                    static_cast<int64_t>(c10::ScalarType::Undefined));
    case K::LayoutType:
      return asEnum(v, type, static_cast<int64_t>(c10::Layout::NumOptions), -1);
    case K::MemoryFormatType:
      return asEnum(v, type, static_cast<int64_t>(c10::MemoryFormat::NumOptions), -1);
    case K::FloatType:
    case K::SymFloatType:
      return asDouble(v, type);
    case K::BoolType:
      return asInt(v, type) != 0;
    case K::NumberType:
      return asScalar(v, type);
    case K::StringType:
      if (v.kind != ValueKind::kString) fail(v, type, "not a string");
      return v.string_value.str();
    case K::DeviceObjType:
      if (v.kind != ValueKind::kDevice && v.kind != ValueKind::kString)
        fail(v, type, "not a device");
      return devices.map(v.string_value.str());
    case K::NoneType:
      return c10::IValue();
    case K::GeneratorType:
      return c10::IValue();
    case K::ListType:
      return convertList(v, type->cast<c10::ListType>(), devices, 0);
    case K::StreamObjType:
      // The trace records a stream as an opaque object; the replay's work
      // runs on the target device's default stream.
      return c10::Stream(c10::Stream::DEFAULT, devices.target);
    case K::AnyType:
      if (v.kind == ValueKind::kString) return v.string_value.str();
      if (v.kind == ValueKind::kNone) return c10::IValue();
      return asScalar(v, type);
    default:
      fail(v, type, "argument type not supported by replay");
  }
}

bool isTensorType(const c10::TypePtr& t) { return t->kind() == c10::TypeKind::TensorType; }

bool isOptionalTensor(const c10::TypePtr& t) {
  return t->kind() == c10::TypeKind::OptionalType &&
         isTensorType(t->castRaw<c10::OptionalType>()->getElementType());
}

// Tensor, Tensor?, Tensor[] and Tensor?[] arguments become slot references.
bool planTensorArg(const Value& v, const c10::TypePtr& type, size_t pos, int32_t arg,
                   const SlotResolver& slot_of, const TensorFilter& replayable,
                   ArgumentPlan& plan) {
  auto slotOf = [&](const Value& e, int32_t element) -> int32_t {
    if (e.kind == ValueKind::kNone) return -1;
    if (e.kind != ValueKind::kTensor) fail(e, type, "not a tensor");
    const bool bound = replayable ? replayable(e.tensor) : e.tensor->defined();
    return bound ? slot_of(e.tensor, arg, element) : -1;
  };
  TensorArg t;
  t.position = pos;
  if (isTensorType(type) || isOptionalTensor(type)) {
    t.kind = TensorArg::Kind::kTensor;
    t.optional = isOptionalTensor(type);
    t.slots.push_back(slotOf(v, -1));
  } else if (type->kind() == c10::TypeKind::ListType) {
    const auto& elem = type->castRaw<c10::ListType>()->getElementType();
    if (!isTensorType(elem) && !isOptionalTensor(elem)) return false;
    if (v.kind != ValueKind::kList && v.kind != ValueKind::kTuple) fail(v, type, "expected a list");
    t.kind =
        isTensorType(elem) ? TensorArg::Kind::kTensorList : TensorArg::Kind::kOptionalTensorList;
    for (size_t e = 0; e < v.elements.size(); ++e) {
      t.slots.push_back(slotOf(v.elements[e], static_cast<int32_t>(e)));
    }
  } else {
    return false;
  }
  plan.tensors.push_back(std::move(t));
  return true;
}

}  // namespace

c10::Device DeviceMap::map(const std::string& recorded) const {
  if (target.is_cpu()) return target;
  if (recorded.rfind("cuda", 0) == 0 || recorded.empty() || !trace_has_cuda) return target;
  return c10::Device(c10::kCPU);
}

at::ScalarType scalarTypeOf(core::DType dtype) {
  using D = core::DType;
  switch (dtype) {
    case D::kFloat32:
      return at::kFloat;
    case D::kFloat64:
      return at::kDouble;
    case D::kFloat16:
      return at::kHalf;
    case D::kBFloat16:
      return at::kBFloat16;
    case D::kInt8:
      return at::kChar;
    case D::kUInt8:
      return at::kByte;
    case D::kInt16:
      return at::kShort;
    case D::kInt32:
      return at::kInt;
    case D::kInt64:
      return at::kLong;
    case D::kBool:
      return at::kBool;
    case D::kComplex64:
      return at::kComplexFloat;
    case D::kComplex128:
      return at::kComplexDouble;
    case D::kUnknown:
      break;
  }
  throw ConversionError("tensor element type not known to replay");
}

ArgumentPlan buildArguments(const core::Node& node, const c10::FunctionSchema& schema,
                            const std::vector<int>& recorded_index, const DeviceMap& devices,
                            const SlotResolver& slot_of, const TensorFilter& replayable) {
  const auto& args = schema.arguments();
  ArgumentPlan plan;
  plan.values.reserve(args.size());
  for (size_t k = 0; k < args.size(); ++k) {
    const c10::Argument& a = args[k];
    const int r = k < recorded_index.size() ? recorded_index[k] : -1;
    if (r < 0) {
      if (!a.default_value()) {
        throw ConversionError(
            fmt::format("argument '{}' was not recorded and has no default", a.name()));
      }
      plan.values.push_back(*a.default_value());
      continue;
    }
    const Value& v = node.inputs[static_cast<size_t>(r)];
    if (planTensorArg(v, a.type(), k, r, slot_of, replayable, plan)) {
      plan.values.emplace_back();  // placeholder, filled per call
      continue;
    }
    if (a.type()->kind() == c10::TypeKind::ListType) {
      plan.values.push_back(
          convertList(v, a.type()->cast<c10::ListType>(), devices, a.N().value_or(0)));
    } else {
      // real_type: a schema's ScalarType, Layout and MemoryFormat are `int`
      // to the dispatcher; their real types bound the codes (asEnum).
      plan.values.push_back(convert(v, a.real_type(), devices));
    }
  }
  return plan;
}

}  // namespace tracetwin::replay
