// A Chakra node's attributes read back (private to core/chakra): as the ET
// JSON values the reader rebuilds nodes from, as the NodeRecord fields
// `inspect` lists, and a file's summary.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/chakra/chakra_file.h"
#include "core/chakra/chakra_trace.h"

namespace tracetwin::core::chakra::detail {

// An integer-like (or bool) attribute's value; nullopt for any other kind.
std::optional<int64_t> intOf(const ChakraProtoMsg::AttributeProto& a);
// `s` as a JSON string literal.
std::string jsonQuoted(std::string_view s);
// The attribute's value as JSON; nullopt for bytes (no ET attribute is bytes).
std::optional<std::string> attrJson(const ChakraProtoMsg::AttributeProto& a);
// A string attribute's text, else its JSON.
std::string attrText(const ChakraProtoMsg::AttributeProto& a);
// The node's attribute `name` (the last of that name); nullptr when absent.
const ChakraProtoMsg::AttributeProto* findAttr(const ChakraProtoMsg::Node& n,
                                               std::string_view name);
NodeRecord recordOf(const ChakraProtoMsg::Node& n, uint64_t offset);
// Throws InputError naming `path` and the node for a comm_size that is
// negative or takes the file's total past 2^63-1 bytes.
ChakraSummary summarize(const ChakraFile& file, const std::vector<NodeRecord>& records,
                        const std::string& path);

}  // namespace tracetwin::core::chakra::detail
