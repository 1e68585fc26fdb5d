#include "core/chakra/chakra_attributes.h"

#include <fmt/core.h>

#include <nlohmann/json.hpp>  // string escaping only
#include <type_traits>

#include "core/errors.h"

namespace tracetwin::core::chakra::detail {

using ChakraProtoMsg::AttributeProto;
using ChakraProtoMsg::Node;

std::optional<int64_t> intOf(const AttributeProto& a) {
  switch (a.value_case()) {
    case AttributeProto::kInt32Val:
      return a.int32_val();
    case AttributeProto::kInt64Val:
      return a.int64_val();
    case AttributeProto::kUint32Val:
      return a.uint32_val();
    case AttributeProto::kUint64Val:
      return static_cast<int64_t>(a.uint64_val());
    case AttributeProto::kSint32Val:
      return a.sint32_val();
    case AttributeProto::kSint64Val:
      return a.sint64_val();
    case AttributeProto::kFixed32Val:
      return a.fixed32_val();
    case AttributeProto::kFixed64Val:
      return static_cast<int64_t>(a.fixed64_val());
    case AttributeProto::kSfixed32Val:
      return a.sfixed32_val();
    case AttributeProto::kSfixed64Val:
      return a.sfixed64_val();
    case AttributeProto::kBoolVal:
      return a.bool_val() ? 1 : 0;
    default:
      return std::nullopt;
  }
}

std::string jsonQuoted(std::string_view s) { return nlohmann::json(std::string(s)).dump(); }

namespace {

template <typename List>
std::string listJson(const List& list) {
  std::string out = "[";
  for (int i = 0; i < list.values_size(); ++i) {
    if (i > 0) out += ',';
    if constexpr (std::is_same_v<List, ChakraProtoMsg::StringList>) {
      out += jsonQuoted(list.values(i));
    } else if constexpr (std::is_same_v<List, ChakraProtoMsg::BoolList>) {
      out += list.values(i) ? "true" : "false";
    } else {
      out += nlohmann::json(list.values(i)).dump();
    }
  }
  return out + "]";
}

}  // namespace

// The attribute's value as JSON; nullopt for bytes (no ET attribute is bytes).
std::optional<std::string> attrJson(const AttributeProto& a) {
  if (auto i = intOf(a); i && a.value_case() != AttributeProto::kBoolVal) return std::to_string(*i);
  switch (a.value_case()) {
    case AttributeProto::kBoolVal:
      return a.bool_val() ? "true" : "false";
    case AttributeProto::kDoubleVal:
      return nlohmann::json(a.double_val()).dump();
    case AttributeProto::kFloatVal:
      return nlohmann::json(a.float_val()).dump();
    case AttributeProto::kStringVal:
      return jsonQuoted(a.string_val());
    case AttributeProto::kDoubleList:
      return listJson(a.double_list());
    case AttributeProto::kFloatList:
      return listJson(a.float_list());
    case AttributeProto::kInt32List:
      return listJson(a.int32_list());
    case AttributeProto::kInt64List:
      return listJson(a.int64_list());
    case AttributeProto::kUint32List:
      return listJson(a.uint32_list());
    case AttributeProto::kUint64List:
      return listJson(a.uint64_list());
    case AttributeProto::kSint32List:
      return listJson(a.sint32_list());
    case AttributeProto::kSint64List:
      return listJson(a.sint64_list());
    case AttributeProto::kBoolList:
      return listJson(a.bool_list());
    case AttributeProto::kStringList:
      return listJson(a.string_list());
    default:
      return std::nullopt;
  }
}

const AttributeProto* findAttr(const Node& n, std::string_view name) {
  // The last one wins, as protobuf's merge semantics have it for a field.
  const AttributeProto* found = nullptr;
  for (const AttributeProto& a : n.attr())
    if (a.name() == name) found = &a;
  return found;
}

NodeRecord recordOf(const Node& n, uint64_t offset) {
  NodeRecord r;
  r.id = n.id();
  r.name = n.name();
  r.type = n.type();
  r.ctrl_deps.assign(n.ctrl_deps().begin(), n.ctrl_deps().end());
  r.data_deps.assign(n.data_deps().begin(), n.data_deps().end());
  r.start_time_micros = n.start_time_micros();
  r.duration_micros = n.duration_micros();
  r.offset = offset;
  for (const AttributeProto& a : n.attr()) {
    const std::string& k = a.name();
    if (k == "is_cpu_op") {
      if (auto v = intOf(a)) r.is_cpu_op = *v != 0;
    } else if (k == "comm_type") {
      r.comm_type = intOf(a);
    } else if (k == "comm_size") {
      r.comm_size = intOf(a);
    } else if (k == "comm_src") {
      r.comm_src = intOf(a);
    } else if (k == "comm_dst") {
      r.comm_dst = intOf(a);
    } else if (k == "tensor_size") {
      r.tensor_size = intOf(a);
    } else if (k == "pg_name" && a.value_case() == AttributeProto::kStringVal) {
      r.pg_name = a.string_val();
    }
  }
  return r;
}

std::string attrText(const AttributeProto& a) {
  if (a.value_case() == AttributeProto::kStringVal) return a.string_val();
  return attrJson(a).value_or("");
}

ChakraSummary summarize(const detail::ChakraFile& file, const std::vector<NodeRecord>& records,
                        const std::string& path) {
  ChakraSummary s;
  s.version = file.metadata.version();
  for (const AttributeProto& a : file.metadata.attr()) s.metadata[a.name()] = attrText(a);
  s.nodes = static_cast<int64_t>(records.size());
  for (const NodeRecord& r : records) {
    ++s.node_types[ChakraProtoMsg::NodeType_IsValid(r.type)
                       ? ChakraProtoMsg::NodeType_Name(ChakraProtoMsg::NodeType(r.type))
                       : fmt::format("type {}", r.type)];
    (r.is_cpu_op.value_or(true) ? s.cpu_nodes : s.gpu_nodes) += 1;
    if (r.type == int(NodeType::kCommColl) || r.type == int(NodeType::kCommSend) ||
        r.type == int(NodeType::kCommRecv)) {
      ++s.comm_nodes;
    }
    const int64_t size = r.comm_size.value_or(0);
    if (size < 0 || __builtin_add_overflow(s.comm_bytes, size, &s.comm_bytes)) {
      throw InputError(fmt::format(
          "{}: byte {}: node {} (\"{}\"): comm_size {}: expected a byte count from 0 that keeps "
          "the file's total within 2^63-1",
          path, r.offset, r.id, r.name, size));
    }
  }
  return s;
}

}  // namespace tracetwin::core::chakra::detail
