// Typed argument values of an execution-trace node, as recorded by PyTorch's
// execution-trace observer (see ../shared/DESIGN.md, "The execution trace").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/boxed.h"
#include "core/interned_text.h"

namespace tracetwin::core {

// Element types of tensors. Names follow the type strings in traces:
// "Tensor(float)", "Tensor(c10::Half)", "Tensor(long)" ...
enum class DType : uint8_t {
  kUnknown,
  kFloat32,
  kFloat64,
  kFloat16,
  kBFloat16,
  kInt8,
  kUInt8,
  kInt16,
  kInt32,
  kInt64,
  kBool,
  kComplex64,
  kComplex128,
};

// "float" -> kFloat32, "c10::Half" -> kFloat16, ... kUnknown when not known.
DType dtypeFromTraceName(const std::string& name);
const char* dtypeName(DType dtype);  // "float32", "int64", ...
int64_t dtypeItemsize(DType dtype);  // bytes; 0 for kUnknown
bool isFloatingPoint(DType dtype);

// One tensor as recorded at one use site: the 6-field value
// [tensor_id, storage_id, offset(elements), numel, itemsize, device] plus the
// shape and strides recorded beside it. Traces before 1.1.1 record no strides
// (strides empty: contiguous is assumed); traces before ~1.0.1 have 5 fields
// and no device (device empty).
struct TensorValue {
  int64_t tensor_id = 0;
  int64_t storage_id = 0;
  int64_t offset = 0;  // in elements of itemsize
  int64_t numel = 0;
  int64_t itemsize = 0;  // bytes per element
  InternedText device;  // "cpu", "cuda:0", or "" when not recorded
  DType dtype = DType::kUnknown;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;

  // An undefined tensor is recorded as [id,0,0,0,0,""] with type
  // "Tensor(nullptr (uninitialized))".
  bool defined() const { return storage_id != 0 || numel != 0 || itemsize != 0; }
  int64_t bytes() const { return numel * itemsize; }
};

enum class ValueKind : uint8_t {
  kNone,          // "None", "<None>"
  kInt,           // "Int" (also SymInt, uint64 attributes)
  kDouble,        // "Double"; inf/nan arrive as quoted strings
  kBool,          // "Bool"
  kString,        // "String"
  kDevice,        // "Device": string_value holds "cuda:0"
  kScalarType,    // recorded as Int code (c10::ScalarType) in int_value
  kLayout,        // Int code in int_value
  kMemoryFormat,  // Int code in int_value
  kTensor,        // "Tensor(...)": tensor holds it
  kList,          // "GenericList[...]": elements
  kTuple,         // "Tuple[...]": elements
  kGenerator,     // "<Generator>"
  kObject,        // anything else the reader keeps as raw text (string_value)
};

const char* valueKindName(ValueKind kind);

// A recorded argument. The recorded type string is kept verbatim because
// replay needs it to rebuild c10::IValues exactly; a trace has a few dozen
// distinct ones, so it is interned (8 bytes, no allocation per value).
struct Value {
  ValueKind kind = ValueKind::kNone;
  bool bool_value = false;
  InternedText type;  // verbatim: "Int", "Tensor(float)", "GenericList[Int,Int]"
  int64_t int_value = 0;
  double double_value = 0.0;
  // kString, kDevice, kObject (and enum codes not written as Int): interned
  // like the type, since most are repeated ("cuda:0", "<None>", "mean").
  InternedText string_value;
  Boxed<TensorValue> tensor;    // kind == kTensor; an empty TensorValue otherwise
  std::vector<Value> elements;  // kind == kList or kTuple

  bool isTensor() const { return kind == ValueKind::kTensor; }
  bool isList() const { return kind == ValueKind::kList; }
  // True for a tensor or a (possibly nested) list/tuple holding a tensor.
  bool containsTensor() const;
};

// Calls fn(const TensorValue&) on every tensor inside v, depth first.
template <typename Fn>
void forEachTensor(const Value& v, Fn&& fn) {
  if (v.kind == ValueKind::kTensor) {
    fn(*v.tensor);
    return;
  }
  for (const Value& e : v.elements) forEachTensor(e, fn);
}

}  // namespace tracetwin::core
