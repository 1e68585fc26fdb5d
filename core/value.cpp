#include "core/value.h"

#include <array>
#include <string_view>

namespace tracetwin::core {
namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  int64_t itemsize;
  bool floating;
};

// Indexed by DType's underlying value.
constexpr std::array<DTypeInfo, 13> kDTypes{{
    {DType::kUnknown, "unknown", 0, false},
    {DType::kFloat32, "float32", 4, true},
    {DType::kFloat64, "float64", 8, true},
    {DType::kFloat16, "float16", 2, true},
    {DType::kBFloat16, "bfloat16", 2, true},
    {DType::kInt8, "int8", 1, false},
    {DType::kUInt8, "uint8", 1, false},
    {DType::kInt16, "int16", 2, false},
    {DType::kInt32, "int32", 4, false},
    {DType::kInt64, "int64", 8, false},
    {DType::kBool, "bool", 1, false},
    {DType::kComplex64, "complex64", 8, false},
    {DType::kComplex128, "complex128", 16, false},
}};

// The element-type spellings the observer writes inside "Tensor(...)": it
// prints c10's C++ type names, which differ by platform ("long" and
// "long int" are both int64 - the DLRM traces have both).
struct TraceDTypeName {
  std::string_view name;
  DType dtype;
};
constexpr std::array<TraceDTypeName, 24> kTraceNames{{
    {"float", DType::kFloat32},
    {"double", DType::kFloat64},
    {"c10::Half", DType::kFloat16},
    {"c10::BFloat16", DType::kBFloat16},
    {"signed char", DType::kInt8},
    {"int8_t", DType::kInt8},
    {"unsigned char", DType::kUInt8},
    {"uint8_t", DType::kUInt8},
    {"short", DType::kInt16},
    {"short int", DType::kInt16},
    {"int16_t", DType::kInt16},
    {"int", DType::kInt32},
    {"int32_t", DType::kInt32},
    {"long", DType::kInt64},
    {"long int", DType::kInt64},
    {"long long", DType::kInt64},
    {"long long int", DType::kInt64},
    {"int64_t", DType::kInt64},
    {"bool", DType::kBool},
    {"c10::complex<float>", DType::kComplex64},
    {"c10::complex<double>", DType::kComplex128},
    {"float32", DType::kFloat32},
    {"float16", DType::kFloat16},
    {"bfloat16", DType::kBFloat16},
}};

}  // namespace

DType dtypeFromTraceName(const std::string& name) {
  for (const TraceDTypeName& entry : kTraceNames) {
    if (entry.name == name) return entry.dtype;
  }
  return DType::kUnknown;
}

const char* dtypeName(DType dtype) { return kDTypes[static_cast<size_t>(dtype)].name; }
int64_t dtypeItemsize(DType dtype) { return kDTypes[static_cast<size_t>(dtype)].itemsize; }
bool isFloatingPoint(DType dtype) { return kDTypes[static_cast<size_t>(dtype)].floating; }

const char* valueKindName(ValueKind kind) {
  static constexpr std::array<const char*, 14> kNames{
      "none",   "int",           "double", "bool", "string", "device",    "scalar_type",
      "layout", "memory_format", "tensor", "list", "tuple",  "generator", "object"};
  return kNames[static_cast<size_t>(kind)];
}

bool Value::containsTensor() const {
  if (kind == ValueKind::kTensor) return true;
  for (const Value& e : elements) {
    if (e.containsTensor()) return true;
  }
  return false;
}

}  // namespace tracetwin::core
