// Internal to core: node attributes by name (modern "attrs" entries and the
// legacy flat keys), and what old traces say about collectives positionally.
#pragma once

#include <cstddef>
#include <string_view>

#include "core/json_values.h"

namespace tracetwin::core::detail {

// Sets the attribute `name` of `node` from `value`; false when the name is not
// one the reader keeps (the value is then left unread and skipped).
bool setNodeAttribute(Node& node, std::string_view name, od::value& value, const JsonContext& cx);
// The same, searching from `hint` (the entry after the previous match, kept
// by the caller from attribute to attribute); updates it.
bool setNodeAttribute(Node& node, std::string_view name, od::value& value, const JsonContext& cx,
                      size_t& hint);

// record_param_comms before schema 1.1.0 has no comms attributes; its
// positional inputs say what they can (collective name, process group, split
// sizes, world size). Fills only what the attributes left unset.
void fillCommFromInputs(Node& node);

// Throws InputError (naming `source` and the node) unless the comms element
// counts of `node` (messages and split sizes) are counts whose bytes fit in
// 64 bits (an in_msg_nelems of 4e18 floats was predicted to take 101 years),
// its group is at most 2^24 ranks and their numbers fit in an int.
void checkCommCounts(const Node& node, const std::string& source);

}  // namespace tracetwin::core::detail
