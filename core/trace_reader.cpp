// Execution-trace reader: simdjson On-Demand over the whole document, one
// forward pass, fields taken in the order they appear (no key lookups that
// would rescan a node). Both node layouts go through the same field loop:
//   modern (1.0.2+): "ctrl_deps", "inputs": {values, shapes, types, strides}, "attrs": [...]
//   legacy (1.0.1):  "parent", "inputs": [...], "input_shapes", "input_types", flat attrs
#include "core/trace_reader.h"

#include <fmt/core.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include "core/byte_source.h"
#include "core/chakra/chakra_trace.h"
#include "core/errors.h"
#include "core/gzip_file.h"
#include "core/json_values.h"
#include "core/node_attributes.h"
#include "core/trace_parser.h"

namespace tracetwin::core {
namespace {

namespace od = detail::od;

// ---- schema versions -------------------------------------------------------

struct Version {
  int major = 0, minor = 0, patch = 0;
  bool operator<(const Version& o) const {
    return major != o.major   ? major < o.major
           : minor != o.minor ? minor < o.minor
                              : patch < o.patch;
  }
};

std::optional<Version> parseVersion(const std::string& schema) {
  Version v;
  char tail = 0;
  if (std::sscanf(schema.c_str(), "%d.%d.%d%c", &v.major, &v.minor, &v.patch, &tail) < 3) {
    return std::nullopt;
  }
  if (tail != 0 && tail != '-') return std::nullopt;
  return v;
}

std::string knownList() {
  std::string out;
  for (const std::string& s : knownSchemas()) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// Known: read as is. A newer version of a known major (PyTorch moves faster
// than this reader): read with a warning. Anything else: refused.
void checkSchema(const std::string& schema, const std::string& source, Graph& graph) {
  for (const std::string& known : knownSchemas()) {
    if (schema == known) return;
  }
  const std::optional<Version> v = parseVersion(schema);
  const std::optional<Version> newest = parseVersion(knownSchemas().back());
  if (v && newest && v->major == newest->major && newest < *v) {
    graph.warnings.push_back(
        fmt::format("schema {} is newer than the newest known ({}); read as {}", schema,
                    knownSchemas().back(), knownSchemas().back()));
    return;
  }
  throw InputError(fmt::format("{}: unknown execution-trace schema \"{}\"; known: {}", source,
                               schema, knownList()));
}

// ---- what the file is, before JSON parsing ----------------------------------

void checkLooksLikeJsonObject(std::string_view data, const std::string& source) {
  size_t i = 0;
  while (i < data.size() &&
         (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t')) {
    ++i;
  }
  if (i == data.size()) {
    throw InputError(fmt::format("{}: empty file; expected a JSON execution trace", source));
  }
  if (data[i] == '{') return;
  if (chakra::looksLikeChakraTrace(data.substr(0, 64))) {
    throw InputError(fmt::format(
        "{}: this is a Chakra protobuf execution trace (binary), not JSON; read it from its file "
        "(readTrace reads both formats)",
        source));
  }
  if (data[i] == '[') {
    throw InputError(
        fmt::format("{}: byte {}: top-level JSON array; expected an object "
                    "{{\"schema\": ..., \"nodes\": [...]}}",
                    source, i));
  }
  throw InputError(
      fmt::format("{}: byte {}: expected '{{' starting a JSON execution trace, found "
                  "byte 0x{:02x} (not JSON)",
                  source, i, static_cast<unsigned char>(data[i])));
}

// simdjson sizes its buffers to the document and fresh pages cost page
// faults on every parse; reading many small traces in one process (8 ranks,
// sweeps, tests) reuses one parser per thread. Big traces get their own, freed
// right after reading, so at most ~kReusedParserBytes of index stays mapped.
constexpr size_t kReusedParserBytes = size_t{32} << 20;

od::parser& parserFor(size_t json_size, std::optional<od::parser>& own) {
  if (json_size <= kReusedParserBytes) {
    thread_local od::parser reused;
    return reused;
  }
  return own.emplace();
}

// Keys of ET objects never hold escapes; the raw text is compared as is (an
// escaped key simply matches nothing and is skipped). Keys are a few bytes
// long: a plain loop beats a memchr call.
std::string_view keyOf(od::field& f) {
  const char* raw = f.key().raw();
  size_t n = 0;
  while (n < 256 && raw[n] != '"') ++n;
  return n == 256 ? std::string_view() : std::string_view(raw, n);
}

// ---- nodes ------------------------------------------------------------------

}  // namespace

namespace detail {

void checkStartsLikeJsonObject(std::string_view data, const std::string& source) {
  checkLooksLikeJsonObject(data, source);
}

std::shared_ptr<const OpSchema> SchemaCache::find(const InternedText& text) {
  auto it = parsed_.find(&text.str());
  if (it != parsed_.end()) return it->second;
  std::shared_ptr<const OpSchema> schema;
  if (shared_ != nullptr) {
    const std::lock_guard<std::mutex> lock(shared_->mutex_);
    schema = shared_->find(text);
  } else {
    try {
      schema = std::make_shared<const OpSchema>(parseOpSchema(text, std::string()));
    } catch (const InputError&) {
      // Left null: finalize parses it again and reports it with the node id.
    }
  }
  parsed_.emplace(&text.str(), schema);
  return schema;
}

Graph TraceParser::parse() {
  Graph graph;
  graph.source_path = source_;
  parseInto(graph);
  graph.finalize();
  return graph;
}

void TraceParser::start() {
  parser_ = &parserFor(json_.size(), own_parser_);
  const simdjson::error_code err = parser_->iterate(json_).get(doc_);
  cx_.emplace(doc_, std::string_view(json_.data(), json_.size()), source_, base_);
  if (err != simdjson::SUCCESS) {
    // Stage 1 (the structural index) failed: unterminated string, bad UTF-8,
    // or a file over simdjson's 4 GiB limit.
    throw InputError(fmt::format("{}: not valid JSON{}: {}", source_,
                                 base_ > 0 ? fmt::format(" after byte {}", base_) : "",
                                 simdjson::error_message(err)));
  }
}

size_t TraceParser::parseNodeArray(Graph& graph) {
  start();
  od::array a;
  cx_->check(doc_.get_array().get(a), "an array of nodes");
  for (auto element : a) {
    cx_->check(element.error(), "a node object");
    value&& v = std::move(element).value_unsafe();  // in place, no copy
    readNode(v, graph.emplaceNode());
  }
  const char* after = nullptr;
  const size_t end = doc_.current_location().get(after) == simdjson::SUCCESS
                         ? static_cast<size_t>(after - json_.data())
                         : std::string_view::npos;
  releaseInput();
  return end;
}

void TraceParser::parseInto(Graph& graph) {
  checkLooksLikeJsonObject(std::string_view(json_.data(), json_.size()), source_);
  start();
  od::object top;
  cx_->check(doc_.get_object().get(top), "a JSON object at the top level");
  bool have_schema = false, have_nodes = false;
  // Fields are used in place (value_unsafe after the error check): copying
  // one out of its result re-reads the iterator just written field by field,
  // which misses store-to-load forwarding and stalls on every field.
  for (auto field : top) {
    cx_->check(field.error(), "a \"key\": value pair in the top-level object");
    od::field&& f = std::move(field).value_unsafe();
    readTopField(f, graph, have_schema, have_nodes);
  }
  // Anything after the top-level object is an error, not ignored.
  const char* after = nullptr;
  if (doc_.current_location().get(after) == simdjson::SUCCESS) {
    cx_->failAt(after, "the end of the document after the top-level object");
  }
  if (!have_schema) throw InputError(fmt::format("{}: missing key \"schema\"", source_));
  if (!have_nodes) throw InputError(fmt::format("{}: missing key \"nodes\"", source_));
  releaseInput();
}

// The JSON text and simdjson's index (4 bytes per structural character, ~1x
// the file on ETs) are not needed once the nodes are read: peak memory is
// then the larger of (input + index + nodes) and (nodes + finalize's tables),
// not their sum.
void TraceParser::releaseInput() {
  cx_.reset();
  doc_ = od::document();
  own_parser_.reset();
  parser_ = nullptr;
  std::string().swap(buffer_);
}

void TraceParser::readTopField(od::field& f, Graph& graph, bool& have_schema, bool& have_nodes) {
  const std::string_view key = keyOf(f);
  value& v = f.value();
  if (key == "schema") {
    graph.schema = std::string(detail::readString(v, *cx_, "\"schema\""));
    checkSchema(graph.schema, source_, graph);
    have_schema = true;
  } else if (key == "pid") {
    graph.pid = detail::readInt(v, *cx_, "\"pid\"");
  } else if (key == "time") {
    graph.time = std::string(detail::readString(v, *cx_, "\"time\""));
  } else if (key == "start_ts") {
    graph.start_ts = detail::readInt(v, *cx_, "\"start_ts\"");
  } else if (key == "finish_ts") {
    graph.finish_ts = detail::readInt(v, *cx_, "\"finish_ts\"");
  } else if (key == "nodes") {
    readNodes(v, graph);
    have_nodes = true;
  } else {
    skipValue(v);
  }
}

// On-Demand does not validate what it skips: a stray ']' as the value of an
// unknown key would shift its depth and let malformed JSON through (the
// differential fuzzer found one). Unknown values are read as tokens instead,
// which validates them; real traces have few.
void TraceParser::skipValue(value& v) {
  scratch_.clear();
  scratch_.read(v, *cx_);
}

void TraceParser::readNodes(value& nodes, Graph& graph) {
  // Nodes are >= ~250 bytes of JSON each; untouched capacity costs no RSS.
  graph.reserveNodes(json_.size() / 256);
  od::array a = detail::readArray(nodes, *cx_, "\"nodes\"");
  for (auto element : a) {
    cx_->check(element.error(), "a node object");
    value&& v = std::move(element).value_unsafe();  // in place, no copy
    readNode(v, graph.emplaceNode());
  }
  cx_->node = kNoNode;
}

void TraceParser::readNode(value& v, Node& node) {
  const size_t start = cx_->offset();
  cx_->node = kNoNode;
  od::object obj = detail::readObject(v, *cx_, "a node");
  in_.clear();
  out_.clear();
  bool have_id = false, have_parent = false;
  for (auto field : obj) {
    cx_->check(field.error(), "a \"key\": value pair in a node");
    od::field&& f = std::move(field).value_unsafe();
    readNodeField(f, node, have_id, have_parent);
  }
  if (!have_id) {
    throw InputError(fmt::format("{}: byte {}: node without key \"id\"", source_, start));
  }
  if (!have_parent) {
    throw InputError(
        fmt::format("{}: byte {} (node {}): expected key \"ctrl_deps\" (or legacy "
                    "\"parent\") naming the parent node",
                    source_, start, node.id));
  }
  finishSide(in_, node.inputs, "input");
  finishSide(out_, node.outputs, "output");
  if (!node.op_schema_text.empty()) node.schema = schemas_->find(node.op_schema_text);
  if (node.name == "record_param_comms") detail::fillCommFromInputs(node);
  detail::checkCommCounts(node, source_);
}

void TraceParser::readNodeField(od::field& f, Node& node, bool& have_id, bool& have_parent) {
  const std::string_view key = keyOf(f);
  value& v = f.value();
  if (key == "id") {
    node.id = detail::readNodeId(v, *cx_, "the node \"id\"");
    cx_->node = node.id;
    have_id = true;
  } else if (key == "name") {
    const std::string_view name = detail::readString(v, *cx_, "the node \"name\"");
    node.name.assign(name.data(), name.size());
  } else if (key == "ctrl_deps" || key == "parent") {
    node.parent = detail::readInt(v, *cx_, "the parent id");
    have_parent = true;
  } else if (key == "inputs" || key == "outputs") {
    SideBuffers& side = key == "inputs" ? in_ : out_;
    od::json_type t{};
    cx_->check(v.type().get(t), "inputs/outputs");
    if (t == od::json_type::object) {
      readSideObject(v, side);
    } else {
      side.values.read(v, *cx_);  // legacy: values only, shapes and types beside
    }
  } else if (key == "input_shapes" || key == "output_shapes") {
    (key[0] == 'i' ? in_ : out_).shapes.read(v, *cx_);
  } else if (key == "input_types" || key == "output_types") {
    SideBuffers& side = key[0] == 'i' ? in_ : out_;
    detail::readStringArray(v, *cx_, "a type string", side.types);
    side.has_types = true;
  } else if (key == "attrs") {
    readAttrs(v, node);
  } else {
    // Legacy flat attributes; anything else is checked and dropped.
    if (!detail::setNodeAttribute(node, key, v, *cx_)) skipValue(v);
  }
}

void TraceParser::readSideObject(value& v, SideBuffers& side) {
  od::object obj = detail::readObject(v, *cx_, "inputs/outputs");
  for (auto field : obj) {
    cx_->check(field.error(), "a \"key\": value pair in inputs/outputs");
    od::field&& f = std::move(field).value_unsafe();
    const std::string_view key = keyOf(f);
    if (key == "values") {
      side.values.read(f.value(), *cx_);
    } else if (key == "shapes") {
      side.shapes.read(f.value(), *cx_);
    } else if (key == "strides") {
      side.strides.read(f.value(), *cx_);
    } else if (key == "types") {
      detail::readStringArray(f.value(), *cx_, "a type string", side.types);
      side.has_types = true;
    } else {
      skipValue(f.value());
    }
  }
}

void TraceParser::readAttrs(value& v, Node& node) {
  size_t hint = 0;
  for (auto element : detail::readArray(v, *cx_, "\"attrs\"")) {
    cx_->check(element.error(), "an attribute object");
    value&& attr = std::move(element).value_unsafe();  // in place, no copy
    od::object obj = detail::readObject(attr, *cx_, "an attribute {\"name\", \"type\", \"value\"}");
    std::string_view name;
    bool set = false;
    for (auto field : obj) {
      cx_->check(field.error(), "a \"key\": value pair in an attribute");
      od::field&& f = std::move(field).value_unsafe();
      const std::string_view key = keyOf(f);
      if (key == "name") {
        name = detail::readString(f.value(), *cx_, "the attribute name");
      } else if (key == "value") {
        if (name.empty()) cx_->fail("\"name\" before \"value\" in an attribute");
        if (!detail::setNodeAttribute(node, name, f.value(), *cx_, hint)) skipValue(f.value());
        set = true;
      } else if (key == "type") {
        detail::readString(f.value(), *cx_, "the attribute type");  // checked, not kept
      } else {
        skipValue(f.value());
      }
    }
    if (!set) cx_->fail("an attribute with \"name\" and \"value\"");
  }
}

void TraceParser::finishSide(SideBuffers& side, std::vector<Value>& out, const char* what) {
  if (side.values.empty()) {
    if (side.has_types && !side.types.empty()) {
      cx_->fail(fmt::format("{} values to go with the {} types", what, side.types.size()));
    }
    return;
  }
  if (!side.has_types) cx_->fail(fmt::format("{} types beside the {} values", what, what));
  detail::ValueBuilder builder(*cx_);
  builder.build(side.values, side.types, out);
  if (!side.shapes.empty()) builder.attachShapes(side.shapes, out, false);
  if (!side.strides.empty()) builder.attachShapes(side.strides, out, true);
  builder.checkTensors(out, side.shapes.tokens().size() > 2);  // "shapes": [] records none
}

}  // namespace detail

const std::vector<std::string>& knownSchemas() {
  // Oldest first; the last is the newest (the reference for "newer" schemas).
  static const std::vector<std::string> kKnown{
      "1.0.1",               // PyTorch 1.13 ExecutionGraphObserver: legacy flat nodes
      "1.0.2-chakra.0.0.4",  // inputs/outputs objects, ctrl_deps, attrs
      "1.0.3-chakra.0.0.4",  // process group as a (name, desc) tuple
      "1.0.4-chakra.0.0.4",  // kernel_backend / kernel_file (PT2, Triton)
      "1.1.0-chakra.0.0.4",  // comms attributes on record_param_comms
      "1.1.1-chakra.0.0.4",  // strides, tensor_range
      "1.1.1-chakra.1.0.0",
  };
  return kKnown;
}

std::string readMaybeGzipFile(const std::string& path) {
  std::string bytes = readFileBytes(path, simdjson::SIMDJSON_PADDING);
  if (isGzip(bytes)) {
    std::string plain = gunzip(bytes, path, simdjson::SIMDJSON_PADDING);
    return plain;
  }
  return bytes;
}

Graph parseTrace(std::string_view json, const std::string& source) {
  // simdjson reads up to SIMDJSON_PADDING bytes past the end: copy into a
  // buffer with that much spare capacity (readTrace avoids this copy).
  std::string padded;
  padded.reserve(json.size() + simdjson::SIMDJSON_PADDING);
  padded.assign(json.data(), json.size());
  return detail::TraceParser(std::move(padded), source).parse();
}

Graph readTrace(const std::string& path) {
  // A pipe or FIFO (`inspect /dev/stdin`, `<(zcat t.gz)`) can be read only
  // once: all of it, then parsed from memory. Opening it twice lost the
  // sniffed bytes, or waited forever on a FIFO's gone writer.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    const std::string bytes = readMaybeGzipFile(path);
    if (chakra::looksLikeChakraTrace(bytes)) return chakra::parseChakraTrace(bytes, path);
    return parseTrace(bytes, path);
  }
  // A Chakra protobuf ET (told by its first bytes, gzip or not) goes to its
  // own reader; it turns the nodes back into ET JSON (core/chakra).
  {
    char head[64];
    const std::unique_ptr<ByteSource> source = openByteSource(path);
    size_t got = 0;
    while (got < sizeof head) {
      const size_t n = source->read(head + got, sizeof head - got);
      if (n == 0) break;
      got += n;
    }
    if (chakra::looksLikeChakraTrace(std::string_view(head, got)))
      return chakra::readChakraTrace(path);
  }
  // Read while parsing, plain or gzip: the whole text and its structural
  // index would cost ~2x the file on top of the Graph.
  return readTraceStreaming(path);
}

}  // namespace tracetwin::core
