// Node attributes by name: the modern "attrs" entries and the legacy (1.0.1)
// flat keys share one table, so both layouts fill a Node the same way.
#include "core/node_attributes.h"

#include <fmt/core.h>

#include <array>
#include <charconv>

#include "core/text.h"

namespace tracetwin::core::detail {
namespace {

CommAttributes& comm(Node& n) {
  if (!n.comm) n.comm.emplace();
  return *n.comm;
}

template <typename Text>  // std::string or InternedText
void assign(Text& out, od::value& v, const JsonContext& cx, std::string_view what) {
  const std::string_view s = readString(v, cx, what);
  out.assign(s.data(), s.size());
}

bool readFlag(od::value& v, const JsonContext& cx, std::string_view what) {
  bool b = false;
  if (v.get_bool().get(b) == simdjson::SUCCESS) return b;
  return readInt(v, cx, what) != 0;
}

// Split sizes are written as a string "[]" / "[1, 2]" by 1.1.0 (an array in
// some later builds); both forms are read.
void readSplitSizes(od::value& v, const JsonContext& cx, std::vector<int64_t>& out) {
  od::json_type t;
  cx.check(v.type().get(t), "split sizes");
  out.clear();
  if (t == od::json_type::array) {
    for (auto element : readArray(v, cx, "split sizes")) {
      od::value e;
      cx.check(element.get(e), "a split size");
      out.push_back(readInt(e, cx, "a split size"));
    }
    return;
  }
  const std::string_view s = readString(v, cx, "split sizes");
  const char* p = s.data();
  const char* end = s.data() + s.size();
  while (p < end) {
    if ((*p >= '0' && *p <= '9') || *p == '-') {
      int64_t value = 0;
      auto [next, ec] = std::from_chars(p, end, value);
      if (ec != std::errc()) cx.fail("a list of integers for split sizes", s);
      out.push_back(value);
      p = next;
    } else if (*p == '[' || *p == ']' || *p == ',' || *p == ' ') {
      ++p;
    } else {
      cx.fail("a list of integers for split sizes", s);
    }
  }
}

// tensor_range is kept as the raw text of its value (a JSON string holding
// JSON, e.g. "{\"0\": [0, 1000]}" or an object in some builds).
void readRawText(std::string& out, od::value& v, const JsonContext& cx) {
  od::json_type t;
  cx.check(v.type().get(t), "a value");
  std::string_view text;
  if (t == od::json_type::string) {
    text = readString(v, cx, "tensor_range");
  } else if (t == od::json_type::object) {
    od::object o = readObject(v, cx, "tensor_range");
    cx.check(o.raw_json().get(text), "a complete object");
  } else if (t == od::json_type::array) {
    od::array a = readArray(v, cx, "tensor_range");
    cx.check(a.raw_json().get(text), "a complete array");
  } else {
    text = v.raw_json_token();
  }
  out.assign(text.data(), text.size());
}

using Setter = void (*)(Node&, od::value&, const JsonContext&);
struct AttributeHandler {
  std::string_view name;
  Setter set;
};

#define TT_INT_ATTR(field)                                                                       \
  {                                                                                              \
#field,                                                                                      \
        [](Node & n, od::value & v, const JsonContext& cx) { n.field = readInt(v, cx, #field); } \
  }
#define TT_STRING_ATTR(field)                                                                      \
  {                                                                                                \
#field, [](Node & n, od::value & v, const JsonContext& cx) { assign(n.field, v, cx, #field); } \
  }
#define TT_COMM_INT(field)                                                        \
  {                                                                               \
#field, [](Node & n, od::value & v,                                           \
               const JsonContext& cx) { comm(n).field = readInt(v, cx, #field); } \
  }
#define TT_COMM_STRING(field)                                                   \
  {                                                                             \
#field, [](Node & n, od::value & v,                                         \
               const JsonContext& cx) { assign(comm(n).field, v, cx, #field); } \
  }

const std::array<AttributeHandler, 22> kHandlers{{
    TT_INT_ATTR(rf_id),
    TT_INT_ATTR(fw_parent),
    TT_INT_ATTR(seq_id),
    TT_INT_ATTR(scope),
    TT_INT_ATTR(tid),
    TT_INT_ATTR(fw_tid),
    {"op_schema", [](Node& n, od::value& v,
                     const JsonContext& cx) { assign(n.op_schema_text, v, cx, "op_schema"); }},
    TT_STRING_ATTR(kernel_backend),
    TT_STRING_ATTR(kernel_file),
    {"tensor_range",
     [](Node& n, od::value& v, const JsonContext& cx) { readRawText(n.tensor_range, v, cx); }},
    TT_COMM_STRING(collective_name),
    TT_COMM_STRING(dtype),
    TT_COMM_INT(in_msg_nelems),
    TT_COMM_INT(out_msg_nelems),
    {"in_split_size", [](Node& n, od::value& v,
                         const JsonContext& cx) { readSplitSizes(v, cx, comm(n).in_split_size); }},
    {"out_split_size",
     [](Node& n, od::value& v, const JsonContext& cx) {
       readSplitSizes(v, cx, comm(n).out_split_size);
     }},
    TT_COMM_INT(global_rank_start),
    TT_COMM_INT(global_rank_stride),
    TT_COMM_STRING(pg_name),
    TT_COMM_STRING(pg_desc),
    TT_COMM_INT(pg_size),
    {"is_asynchronized_op",
     [](Node& n, od::value& v, const JsonContext& cx) {
       comm(n).is_asynchronized_op = readFlag(v, cx, "is_asynchronized_op");
     }},
}};

#undef TT_INT_ATTR
#undef TT_STRING_ATTR
#undef TT_COMM_INT
#undef TT_COMM_STRING

}  // namespace

bool setNodeAttribute(Node& node, std::string_view name, od::value& value, const JsonContext& cx,
                      size_t& hint) {
  // Every node lists its attributes in the same order, which is the table's:
  // starting after the previous match finds the next one at the first probe.
  const size_t n = kHandlers.size();
  if (name.empty()) return false;
  for (size_t k = 0; k < n; ++k) {
    size_t at = hint + k;
    if (at >= n) at -= n;
    const AttributeHandler& h = kHandlers[at];
    if (h.name.size() == name.size() && h.name[0] == name[0] && text::equalShort(h.name, name)) {
      h.set(node, value, cx);
      hint = at + 1 == n ? 0 : at + 1;
      return true;
    }
  }
  return false;
}

bool setNodeAttribute(Node& node, std::string_view name, od::value& value, const JsonContext& cx) {
  size_t hint = 0;
  return setNodeAttribute(node, name, value, cx, hint);
}

}  // namespace tracetwin::core::detail
