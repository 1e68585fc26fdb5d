#include "core/node_cuts.h"

#include <algorithm>
#include <cstring>

namespace tracetwin::core::detail {
namespace {

bool isSpaceBeforeCut(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

bool findLastNodeEnd(std::string_view text, size_t start, size_t& end) {
  constexpr size_t kLookBack = 64 << 10;
  const char* b = text.data();
  const size_t filled = text.size();
  const size_t lo = std::max(start, filled > kLookBack ? filled - kLookBack : 0);
  size_t hi = filled;
  while (hi > lo) {
    const void* close = memrchr(b + lo, ']', hi - lo);
    if (close == nullptr) return false;
    size_t q = static_cast<size_t>(static_cast<const char*>(close) - b);
    hi = q;
    while (q > start && isSpaceBeforeCut(b[q - 1])) --q;
    if (q > start && b[q - 1] == '}') {
      end = q;
      return true;
    }
  }
  return false;
}

bool findNodeCut(std::string_view text, size_t start, std::string_view indent, size_t& end,
                 size_t& next) {
  const char* b = text.data();
  const size_t filled = text.size();
  size_t hi = filled;
  while (hi > start + 1) {
    const void* nl = memrchr(b + start + 1, '\n', hi - start - 1);
    if (nl == nullptr) return false;
    const size_t p = static_cast<size_t>(static_cast<const char*>(nl) - b);
    hi = p;
    if (p + indent.size() > filled || std::memcmp(b + p, indent.data(), indent.size()) != 0) {
      continue;
    }
    size_t q = p;
    while (q > start && isSpaceBeforeCut(b[q - 1])) --q;
    if (q == start || b[q - 1] != ',') continue;
    --q;
    while (q > start && isSpaceBeforeCut(b[q - 1])) --q;
    if (q == start || b[q - 1] != '}') continue;
    end = q;
    next = p;
    return true;
  }
  return false;
}

}  // namespace tracetwin::core::detail
