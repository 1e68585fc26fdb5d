// Typed argument values of ET nodes. The recorded type string decides how each
// JSON value is read (DESIGN.md "The execution trace"): the same JSON
// `[5,6,0,1048576,4,"cuda:0"]` is a tensor under "Tensor(float)" and a list
// of six values under "GenericList[Int,Int,Int,Int,Int,String]".
#include <fmt/core.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/errors.h"
#include "core/json_values.h"
#include "core/tensor_geometry.h"
#include "core/text.h"

namespace tracetwin::core::detail {
namespace {

// Lists nest (GenericList[GenericList[Tensor(float),...]]); real traces go
// three deep. The bound keeps a hostile file from exhausting the stack.
constexpr int kMaxNesting = 64;

// Type strings of scalar kinds. Anything not here and not Tensor(...),
// GenericList[...] or Tuple[...] is kept as raw text (ValueKind::kObject):
// "Object", "Stream", "Storage" are opaque to replay anyway.
struct TypeKind {
  std::string_view type;
  ValueKind kind;
};
constexpr std::array<TypeKind, 16> kScalarTypes{{
    {"Int", ValueKind::kInt},
    {"SymInt", ValueKind::kInt},
    {"Double", ValueKind::kDouble},
    {"SymFloat", ValueKind::kDouble},
    {"Bool", ValueKind::kBool},
    {"SymBool", ValueKind::kBool},
    {"String", ValueKind::kString},
    {"Device", ValueKind::kDevice},
    {"None", ValueKind::kNone},
    {"NoneType", ValueKind::kNone},
    {"ScalarType", ValueKind::kScalarType},
    {"Layout", ValueKind::kLayout},
    {"MemoryFormat", ValueKind::kMemoryFormat},
    {"Generator", ValueKind::kGenerator},
    {"<Generator>", ValueKind::kGenerator},
    {"<None>", ValueKind::kNone},
}};

ValueKind scalarKind(std::string_view type) {
  // The common ones first, without a loop of compares.
  if (type == "Int") return ValueKind::kInt;
  if (type == "None") return ValueKind::kNone;
  if (type == "Bool") return ValueKind::kBool;
  for (const TypeKind& e : kScalarTypes) {
    if (e.type.size() == type.size() && e.type == type) return e.kind;
  }
  return ValueKind::kObject;
}

// "GenericList[Tensor(float),Tensor(nullptr (uninitialized))]" -> the element
// types, split at top-level commas (tensor types hold parentheses and spaces).
void splitElementTypes(std::string_view inner, std::vector<std::string_view>& out) {
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < inner.size(); ++i) {
    const char c = inner[i];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(inner.substr(start, i - start));
      start = i + 1;
    }
  }
  if (start < inner.size()) out.push_back(inner.substr(start));
}

// Element type for an element without its own entry in the list type: lists
// are cut at 4096 elements and "GenericList[]" names none; guess from JSON.
std::string_view guessType(const Token& tok) {
  switch (tok.kind) {
    case Token::kInt:
    case Token::kUInt:
      return "Int";
    case Token::kDouble:
      return "Double";
    case Token::kBool:
      return "Bool";
    case Token::kString:
      return "String";
    default:
      return "Object";
  }
}

// "Tensor(float)" -> kFloat32. A trace has a handful of tensor types: the
// last one seen is remembered (the string_view points into a type string of
// the current document, compared by content, so a stale pointer is harmless).
DType dtypeOfTensorType(std::string_view type) {
  thread_local std::string last_type;
  thread_local DType last_dtype = DType::kUnknown;
  if (text::equalShort(type, last_type)) return last_dtype;
  last_type.assign(type.data(), type.size());
  last_dtype = dtypeFromTraceName(std::string(type.substr(7, type.size() - 8)));
  return last_dtype;
}

size_t skip(const std::vector<Token>& t, size_t i) {
  return t[i].kind == Token::kBegin ? t[i].end + 1 : i + 1;
}

std::string rawText(const std::vector<Token>& t, size_t i) {
  const Token& tok = t[i];
  switch (tok.kind) {
    case Token::kInt:
      return std::to_string(tok.i);
    case Token::kUInt:
      return std::to_string(static_cast<uint64_t>(tok.i));
    case Token::kDouble:
      return fmt::format("{}", tok.d);
    case Token::kBool:
      return tok.b ? "true" : "false";
    case Token::kNull:
      return "null";
    case Token::kString:
    case Token::kRaw:
      return std::string(tok.s);
    case Token::kBegin: {
      std::string text = "[";
      for (size_t j = i + 1; j < tok.end; j = skip(t, j)) {
        if (j > i + 1) text += ',';
        text += rawText(t, j);
      }
      return text + "]";
    }
    case Token::kEnd:
      break;
  }
  return {};
}

}  // namespace

// ---- TokenList -------------------------------------------------------------

void TokenList::read(od::value& v, const JsonContext& cx) { readValue(v, cx, 0); }

void TokenList::readValue(od::value& v, const JsonContext& cx, int depth) {
  if (depth > kMaxNesting) cx.fail(fmt::format("arrays nested at most {} deep", kMaxNesting));
  const std::string_view raw = v.raw_json_token();
  const char* at = raw.data();
  // The first byte says the JSON type (what v.type() does, without its checks).
  const char first = raw.empty() ? '\0' : raw.front();
  // Tokens are filled in place, field by field: building one on the stack
  // and copying it in reloads it whole before the stores land (a store-
  // forwarding stall per token, ~5% of reading a trace).
  if (first == '[') {
    const size_t begin = tokens_.size();
    Token& open = tokens_.emplace_back();
    open.kind = Token::kBegin;
    open.at = at;
    od::array a;
    cx.check(v.get_array().get(a), "an array");
    for (auto element : a) {
      cx.check(element.error(), "an array element");
      od::value&& e = std::move(element).value_unsafe();  // in place, no copy
      readValue(e, cx, depth + 1);
    }
    Token& close = tokens_.emplace_back();
    close.kind = Token::kEnd;
    close.at = at;
    tokens_[begin].end = static_cast<uint32_t>(tokens_.size() - 1);
    return;
  }
  Token& tok = tokens_.emplace_back();
  tok.at = at;
  switch (first) {
    case '{': {
      od::object o;
      cx.check(v.get_object().get(o), "an object");
      tok.kind = Token::kRaw;
      cx.check(o.raw_json().get(tok.s), "a complete object");
      break;
    }
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9': {
      // Almost every number of a trace is an int64: parse it as one, and
      // only otherwise (a failed get leaves the value unread) find its type.
      if (v.get_int64().get(tok.i) == simdjson::SUCCESS) {
        tok.kind = Token::kInt;
        break;
      }
      od::number n;
      cx.check(v.get_number().get(n), "a number");
      if (n.is_int64()) {
        tok.kind = Token::kInt;
        tok.i = n.get_int64();
      } else if (n.is_uint64()) {
        tok.kind = Token::kUInt;
        tok.i = static_cast<int64_t>(n.get_uint64());
      } else {
        tok.kind = Token::kDouble;
        tok.d = n.get_double();
      }
      break;
    }
    case '"':
      tok.kind = Token::kString;
      tok.s = readString(v, cx, "a string");
      break;
    case 't':
    case 'f':
      tok.kind = Token::kBool;
      cx.check(v.get_bool().get(tok.b), "true or false");
      break;
    case 'n': {
      bool is_null = false;
      cx.check(v.is_null().get(is_null), "null");
      if (!is_null) cx.fail("null");
      tok.kind = Token::kNull;
      break;
    }
    default:
      cx.failAt(at, "a JSON value");
  }
}

// ---- ValueBuilder ----------------------------------------------------------

int64_t ValueBuilder::intOf(const Token& tok, std::string_view what) const {
  if (tok.kind == Token::kInt || tok.kind == Token::kUInt) return tok.i;
  cx_.failAt(tok.at, fmt::format("an integer for {}", what));
}

void ValueBuilder::build(const TokenList& values, const std::vector<std::string_view>& types,
                         std::vector<Value>& out) const {
  const std::vector<Token>& t = values.tokens();
  if (t.empty() || t[0].kind != Token::kBegin) {
    cx_.failAt(t.empty() ? nullptr : t[0].at, "an array of values");
  }
  out.reserve(out.size() + types.size());
  size_t i = 1;
  size_t n = 0;
  while (t[i].kind != Token::kEnd) {
    if (n >= types.size()) {
      cx_.failAt(t[i].at, fmt::format("at most {} values (one per type string)", types.size()));
    }
    out.emplace_back();
    i = readValue(t, i, types[n], out.back(), 0);
    ++n;
  }
  if (n != types.size()) {
    cx_.failAt(t[0].at, fmt::format("{} values (one per type string), found {}", types.size(), n));
  }
}

size_t ValueBuilder::readValue(const std::vector<Token>& t, size_t i, std::string_view type,
                               Value& out, int depth) const {
  if (depth > kMaxNesting) cx_.failAt(t[i].at, "lists nested less deeply");
  out.type.assign(type.data(), type.size());
  if (text::startsWithShort(type, "Tensor")) return readTensor(t, i, type, out);
  if (text::startsWithShort(type, "GenericList[") || text::startsWithShort(type, "Tuple[")) {
    return readList(t, i, type, out, depth);
  }
  const Token& tok = t[i];
  out.kind = scalarKind(type);
  switch (out.kind) {
    case ValueKind::kInt:
      out.int_value = intOf(tok, type);
      break;
    case ValueKind::kDouble:
      // JSON has no inf/nan; the observer writes them as quoted strings.
      if (tok.kind == Token::kDouble) {
        out.double_value = tok.d;
      } else if (tok.kind == Token::kInt) {
        out.double_value = static_cast<double>(tok.i);
      } else if (tok.kind == Token::kUInt) {
        out.double_value = static_cast<double>(static_cast<uint64_t>(tok.i));
      } else if (tok.kind == Token::kString && (tok.s == "inf" || tok.s == "Infinity")) {
        out.double_value = std::numeric_limits<double>::infinity();
      } else if (tok.kind == Token::kString && (tok.s == "-inf" || tok.s == "-Infinity")) {
        out.double_value = -std::numeric_limits<double>::infinity();
      } else if (tok.kind == Token::kString &&
                 (tok.s == "nan" || tok.s == "-nan" || tok.s == "NaN")) {
        out.double_value = std::numeric_limits<double>::quiet_NaN();
      } else {
        cx_.failAt(tok.at, "a number (or \"inf\", \"-inf\", \"nan\") for Double");
      }
      break;
    case ValueKind::kBool:
      // Some observers write bools as 0/1.
      if (tok.kind == Token::kBool) {
        out.bool_value = tok.b;
      } else if (tok.kind == Token::kInt && (tok.i == 0 || tok.i == 1)) {
        out.bool_value = tok.i == 1;
      } else {
        cx_.failAt(tok.at, "true or false for Bool");
      }
      break;
    case ValueKind::kString:
    case ValueKind::kDevice:
      if (tok.kind != Token::kString) cx_.failAt(tok.at, fmt::format("a string for {}", type));
      out.string_value.assign(tok.s.data(), tok.s.size());
      break;
    case ValueKind::kScalarType:
    case ValueKind::kLayout:
    case ValueKind::kMemoryFormat:
      // c10 enum codes as Int; any other form is kept as text.
      if (tok.kind == Token::kInt) {
        out.int_value = tok.i;
      } else {
        out.string_value = rawText(t, i);
      }
      break;
    default:  // None, Generator, Object...: written as "<None>", "<Generator>"...
      // A string's raw text is the string: interned from the input as is.
      out.string_value = tok.kind == Token::kString || tok.kind == Token::kRaw
                             ? InternedText(tok.s)
                             : InternedText(rawText(t, i));
      break;
  }
  return skip(t, i);
}

// [tensor_id, storage_id, offset, numel, itemsize, device]; traces before
// PyTorch 2.0 may lack the device (5 fields). Undefined: [id,0,0,0,0,""].
size_t ValueBuilder::readTensor(const std::vector<Token>& t, size_t i, std::string_view type,
                                Value& out) const {
  out.kind = ValueKind::kTensor;
  if (t[i].kind != Token::kBegin) {
    cx_.failAt(t[i].at,
               fmt::format("a tensor [id, storage, offset, numel, itemsize, device] for {}", type));
  }
  const size_t end = t[i].end;
  const size_t fields = end - i - 1;
  if (fields != 5 && fields != 6) {
    cx_.failAt(t[i].at, fmt::format("5 or 6 tensor fields for {}, found {}", type, fields));
  }
  TensorValue& tv = out.tensor.emplace();
  tv.tensor_id = intOf(t[i + 1], "the tensor id");
  tv.storage_id = intOf(t[i + 2], "the storage id");
  tv.offset = intOf(t[i + 3], "the storage offset");
  tv.numel = intOf(t[i + 4], "numel");
  tv.itemsize = intOf(t[i + 5], "itemsize");
  if (fields == 6) {
    if (t[i + 6].kind != Token::kString) cx_.failAt(t[i + 6].at, "a device string");
    tv.device.assign(t[i + 6].s.data(), t[i + 6].s.size());
  }
  if (tv.numel < 0 || tv.itemsize < 0 || tv.offset < 0) {
    cx_.failAt(t[i].at, "a tensor with non-negative offset, numel and itemsize");
  }
  // "Tensor(float)" -> "float"; "Tensor(nullptr (uninitialized))" stays unknown.
  if (type.size() > 8 && type[6] == '(' && type.back() == ')') {
    tv.dtype = dtypeOfTensorType(type);
  }
  return end + 1;
}

size_t ValueBuilder::readList(const std::vector<Token>& t, size_t i, std::string_view type,
                              Value& out, int depth) const {
  out.kind = text::startsWithShort(type, "Tuple[") ? ValueKind::kTuple : ValueKind::kList;
  if (t[i].kind == Token::kString && t[i].s == "<None>") {  // None in an optional list slot
    out.kind = ValueKind::kNone;
    out.string_value = "<None>";
    return i + 1;
  }
  if (t[i].kind != Token::kBegin) cx_.failAt(t[i].at, fmt::format("an array for {}", type));
  if (type.back() != ']') cx_.failAt(t[i].at, "a list type ending in ']'", type);
  const size_t open = type.find('[');
  // One scratch vector per nesting level, reused: no allocation per list.
  // Sized once for the deepest level (a resize would move the vectors that
  // the enclosing lists are still reading).
  thread_local std::vector<std::vector<std::string_view>> scratch(kMaxNesting + 2);
  std::vector<std::string_view>& element_types = scratch[depth];
  element_types.clear();
  splitElementTypes(type.substr(open + 1, type.size() - open - 2), element_types);
  out.elements.reserve(element_types.size());
  const size_t end = t[i].end;
  size_t j = i + 1;
  size_t n = 0;
  while (j < end) {
    out.elements.emplace_back();
    const std::string_view et = n < element_types.size() ? element_types[n]
                                : element_types.empty()  ? guessType(t[j])
                                                         : element_types.back();
    j = readValue(t, j, et, out.elements.back(), depth + 1);
    ++n;
  }
  return end + 1;
}

void ValueBuilder::attachShapes(const TokenList& shapes, std::vector<Value>& values,
                                bool strides) const {
  const std::vector<Token>& t = shapes.tokens();
  if (t.empty() || t[0].kind != Token::kBegin) {
    cx_.failAt(t.empty() ? nullptr : t[0].at,
               strides ? "an array of strides" : "an array of shapes");
  }
  // Triton nodes append a stream pointer input with no strides entry, so
  // fewer entries than values is normal; extra entries are ignored.
  size_t i = 1;
  size_t k = 0;
  for (; k < values.size() && t[i].kind != Token::kEnd; ++k) {
    i = attachShape(t, i, values[k], strides);
  }
  // A tensor left without a shape would be read as a scalar ("shapes": []
  // records none, as hand-written traces do: no shape is read then).
  if (strides || t.size() == 2) return;
  for (; k < values.size(); ++k) {
    if (values[k].kind == ValueKind::kTensor && values[k].tensor->defined()) {
      cx_.failAt(t[0].at, fmt::format("a shape for each tensor: value {} is a tensor and the "
                                      "shapes array ends before it",
                                      k));
    }
  }
}

void ValueBuilder::checkTensors(const std::vector<Value>& values, bool shapes_recorded) const {
  for (const Value& v : values) {
    if (v.kind == ValueKind::kTensor) {
      const std::string problem = tensorGeometryProblem(*v.tensor, shapes_recorded);
      if (!problem.empty()) {
        cx_.fail(fmt::format("a tensor that can exist (tensor {})", v.tensor->tensor_id), problem);
      }
    } else if (!v.elements.empty()) {
      checkTensors(v.elements, shapes_recorded);
    }
  }
}

size_t ValueBuilder::attachShape(const std::vector<Token>& t, size_t i, Value& value,
                                 bool strides) const {
  if (value.kind == ValueKind::kTensor) {
    if (t[i].kind != Token::kBegin) cx_.failAt(t[i].at, "a tensor shape array");
    std::vector<int64_t>& dims = strides ? value.tensor->strides : value.tensor->shape;
    dims.reserve(t[i].end - i - 1);
    for (size_t j = i + 1; j < t[i].end; ++j) dims.push_back(intOf(t[j], "a dimension"));
    return t[i].end + 1;
  }
  if ((value.kind == ValueKind::kList || value.kind == ValueKind::kTuple) &&
      t[i].kind == Token::kBegin) {
    size_t j = i + 1;
    for (size_t k = 0; k < value.elements.size() && j < t[i].end; ++k) {
      j = attachShape(t, j, value.elements[k], strides);
    }
    return t[i].end + 1;
  }
  return skip(t, i);
}

}  // namespace tracetwin::core::detail
