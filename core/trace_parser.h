// Internal to core: the On-Demand trace parser, shared by the whole-document
// reader (trace_reader.cpp) and the streaming one for big files
// (trace_stream.cpp). Not for other layers (it pulls in simdjson).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/graph.h"
#include "core/json_values.h"

namespace tracetwin::core::detail {

using od::value;

// Refuses, with the reason, data that is not a JSON object: empty files,
// top-level arrays, binary data and Chakra protobuf ETs in particular.
void checkStartsLikeJsonObject(std::string_view data, const std::string& source);

// The arrays of one side (inputs or outputs), kept until the node's fields are
// all read; reused from node to node so reading allocates no scratch memory.
struct SideBuffers {
  detail::TokenList values, shapes, strides;
  std::vector<std::string_view> types;
  bool has_types = false;
  void clear() {
    values.clear();
    shapes.clear();
    strides.clear();
    types.clear();
    has_types = false;
  }
};

// Parsed op schemas by text, shared by the nodes read by one parser: the
// lookup happens while the node's text is still in cache (finalize would
// otherwise walk every node's text again, cold). A text that fails to parse
// is left for Graph::finalize, which counts it in the warnings.
// The parser threads of one file (core/node_batches.h) each keep their own
// cache in front of one shared cache: a text is parsed once per file, so
// every node of the Graph with that text shares one OpSchema, whichever
// thread read it.
class SchemaCache {
 public:
  SchemaCache() = default;
  // A cache for one thread in front of `shared`, which it asks under the
  // shared cache's lock (other threads' caches ask it too).
  explicit SchemaCache(SchemaCache* shared) : shared_(shared) {}
  SchemaCache(const SchemaCache&) = delete;
  SchemaCache& operator=(const SchemaCache&) = delete;

  std::shared_ptr<const OpSchema> find(const InternedText& text);

 private:
  SchemaCache* shared_ = nullptr;
  std::mutex mutex_;  // taken by the caches in front of this one
  // Keyed by the interned text's address: one text, one address.
  std::unordered_map<const std::string*, std::shared_ptr<const OpSchema>> parsed_;
};

class TraceParser {
 public:
  // `buffer` holds the JSON with at least SIMDJSON_PADDING bytes of spare
  // capacity; the parser owns it so it can free it before finalize().
  // `base`: byte offset of the buffer's text in the file, for messages.
  // `schemas`: a cache shared with other parsers (the batches of one
  // streamed file); by default the parser's own.
  TraceParser(std::string&& buffer, const std::string& source, size_t base = 0,
              SchemaCache* schemas = nullptr)
      : buffer_(std::move(buffer)),
        json_(buffer_.data(), buffer_.size(), buffer_.capacity()),
        source_(source),
        base_(base),
        schemas_(schemas != nullptr ? schemas : &own_schemas_) {}
  // Parses text it does not own (a slice of the streaming reader's buffer);
  // `json` must stay valid and padded for the parser's lifetime.
  TraceParser(simdjson::padded_string_view json, const std::string& source, size_t base,
              SchemaCache* schemas)
      : json_(json), source_(source), base_(base), schemas_(schemas) {}
  TraceParser(const TraceParser&) = delete;  // schemas_ may point into it
  TraceParser& operator=(const TraceParser&) = delete;

  // A whole trace document -> finished Graph.
  Graph parse();
  // A whole trace document into `graph`, without finalize().
  void parseInto(Graph& graph);
  // A JSON array of nodes (one batch of a streamed file) appended to `graph`.
  // The fast cut's batches may also hold the real end of the nodes array and
  // what follows it: returns the offset in the buffer just after the array,
  // or npos when the array ends at the buffer's last token.
  size_t parseNodeArray(Graph& graph);

 private:
  void readTopField(od::field& f, Graph& graph, bool& have_schema, bool& have_nodes);
  void readNodes(value& nodes, Graph& graph);
  void readNode(value& v, Node& node);
  void readNodeField(od::field& f, Node& node, bool& have_id, bool& have_parent);
  void readSideObject(value& v, SideBuffers& side);
  void readAttrs(value& v, Node& node);
  void finishSide(SideBuffers& side, std::vector<Value>& out, const char* what);

  void skipValue(value& v);
  void start();
  void releaseInput();

  std::string buffer_;
  simdjson::padded_string_view json_;
  const std::string& source_;
  size_t base_ = 0;
  std::optional<od::parser> own_parser_;
  od::parser* parser_ = nullptr;
  od::document doc_;
  std::optional<JsonContext> cx_;
  SideBuffers in_, out_;
  detail::TokenList scratch_;  // unknown values, read to validate them
  SchemaCache own_schemas_;
  SchemaCache* schemas_;
};

}  // namespace tracetwin::core::detail
