// Internal to core/chakra: the text of a Chakra node's inputs and outputs.
// Chakra's PyTorch converter stores an ET node's values, shapes and types
// lists as Python's str() of them ("[[4, 5, 0, 64, 4, 'cuda:0']]", True,
// None, tuples); tracetwin's own exporter writes JSON. Both are turned into
// JSON here so that the ET reader's one value builder types them.
#pragma once

#include <string>
#include <string_view>

namespace tracetwin::core::chakra {

// Python literal (or JSON) -> JSON text: strings in single or double quotes
// with Python escapes, True/False/None (and true/false/null), tuples as
// arrays, inf/-inf/nan as the quoted strings the ET observer writes. An empty
// or all-blank text is "[]". Throws InputError "<what>: byte <n>: expected
// <...>" on anything else (dicts, sets, calls, nesting beyond 64).
std::string pythonLiteralToJson(std::string_view text, const std::string& what);

}  // namespace tracetwin::core::chakra
