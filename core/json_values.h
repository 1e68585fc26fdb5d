// Internal to core: simdjson On-Demand helpers shared by trace_reader.cpp and
// trace_values.cpp. Not for other layers (it pulls in simdjson).
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/graph.h"

namespace tracetwin::core::detail {

namespace od = simdjson::ondemand;

// Where the reader is, for error messages: file, byte offset, node id.
class JsonContext {
 public:
  // `base`: byte offset of `json` in the file (batches of a streamed file).
  JsonContext(od::document& doc, std::string_view json, const std::string& source, size_t base = 0)
      : doc_(doc), json_(json), source_(source), base_(base) {}

  NodeId node = kNoNode;  // node being read, kNoNode outside nodes

  const std::string& source() const { return source_; }
  std::string_view json() const { return json_; }
  size_t offset() const;  // of simdjson's cursor

  // Throws InputError "<file>: byte <n> (node <id>): expected <expected>[: detail]".
  [[noreturn]] void fail(std::string_view expected, std::string_view detail = {}) const;
  [[noreturn]] void failAt(const char* at, std::string_view expected,
                           std::string_view detail = {}) const;
  void check(simdjson::error_code err, std::string_view expected) const {
    if (err != simdjson::SUCCESS) fail(expected, simdjson::error_message(err));
  }

 private:
  [[noreturn]] void failAtOffset(size_t offset, std::string_view expected,
                                 std::string_view detail) const;

  od::document& doc_;
  std::string_view json_;
  const std::string& source_;
  size_t base_ = 0;
};

// Scalars read straight from the document, with `what` named on a mismatch.
int64_t readInt(od::value& v, const JsonContext& cx, std::string_view what);
// A node id: 0 to 2^63-1. readInt keeps the bits of a uint64 above that (for
// pointers and seeds), which made such an id a negative one; every id of the
// 82 stored traces is 1 to 27,439.
int64_t readNodeId(od::value& v, const JsonContext& cx, std::string_view what);
// The string's text. Without escapes this is a view into the input (no copy
// into simdjson's string buffer, which would cost up to 1x the file in RSS).
std::string_view readString(od::value& v, const JsonContext& cx, std::string_view what);
od::array readArray(od::value& v, const JsonContext& cx, std::string_view what);
od::object readObject(od::value& v, const JsonContext& cx, std::string_view what);
void readStringArray(od::value& v, const JsonContext& cx, std::string_view what,
                     std::vector<std::string_view>& out);

// One JSON value flattened to tokens. Values, shapes and types of a node come
// in separate arrays, and values come first, but the types decide how values
// are read; On-Demand reads forward only, so values are tokenised in one pass
// (no heap churn: the token vector is reused) and typed afterwards.
struct Token {
  enum Kind : uint8_t { kInt, kUInt, kDouble, kString, kBool, kNull, kBegin, kEnd, kRaw };
  Kind kind = kNull;
  bool b = false;
  int64_t i = 0;
  double d = 0;
  std::string_view s;        // kString text (unescaped), kRaw JSON text
  const char* at = nullptr;  // where it starts in the input, for messages
  uint32_t end = 0;          // kBegin: index of its kEnd
};

class TokenList {
 public:
  void clear() { tokens_.clear(); }
  bool empty() const { return tokens_.empty(); }
  // Appends the tokens of `v` (any JSON value).
  void read(od::value& v, const JsonContext& cx);
  const std::vector<Token>& tokens() const { return tokens_; }

 private:
  void readValue(od::value& v, const JsonContext& cx, int depth);
  std::vector<Token> tokens_;
};

// Builds typed Values from tokens: values[i] is read as types[i].
class ValueBuilder {
 public:
  explicit ValueBuilder(const JsonContext& cx) : cx_(cx) {}

  // `values` holds one JSON array; appends one Value per element to `out`.
  void build(const TokenList& values, const std::vector<std::string_view>& types,
             std::vector<Value>& out) const;
  // `shapes` holds one JSON array parallel to `values`; attaches shapes (or
  // strides) to the tensors inside them.
  void attachShapes(const TokenList& shapes, std::vector<Value>& values, bool strides) const;
  // Refuses a tensor among `values` whose shape, strides and sizes cannot
  // exist (core/tensor_geometry.h). `shapes_recorded`: the side had shapes.
  void checkTensors(const std::vector<Value>& values, bool shapes_recorded) const;

 private:
  size_t readValue(const std::vector<Token>& t, size_t i, std::string_view type, Value& out,
                   int depth) const;
  size_t readTensor(const std::vector<Token>& t, size_t i, std::string_view type, Value& out) const;
  size_t readList(const std::vector<Token>& t, size_t i, std::string_view type, Value& out,
                  int depth) const;
  size_t attachShape(const std::vector<Token>& t, size_t i, Value& value, bool strides) const;
  int64_t intOf(const Token& tok, std::string_view what) const;

  const JsonContext& cx_;
};

}  // namespace tracetwin::core::detail
