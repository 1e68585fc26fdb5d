// Internal to core: where the streaming reader's fast way may cut the nodes
// array of a trace as PyTorch writes it, each node starting on its own line
// with the first node's indentation (trace_stream.cpp says why a raw newline
// is a safe guess, and how a wrong guess is caught).
#pragma once

#include <cstddef>
#include <string_view>

namespace tracetwin::core::detail {

// The '}' of the last node in text[start, end of text), looked for from the
// end of the file: the last ']' that follows a '}' (the tail after the nodes
// is a few keys long). `end`: just after that '}'.
bool findLastNodeEnd(std::string_view text, size_t start, size_t& end);

// The last line in text(start, end of text) that opens a node, found from
// the end: "},\n" + indent + "{" (`indent` holds "\n" + indentation + "{").
// end: just after that '}'; next: its newline.
bool findNodeCut(std::string_view text, size_t start, std::string_view indent, size_t& end,
                 size_t& next);

}  // namespace tracetwin::core::detail
