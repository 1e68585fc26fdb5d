// Prefix, suffix and substring tests on names (op names, labels, API names).
// C++17's string_view has none of them; seven .cpp files of core/ had their
// own copies, which a unity build also made clash.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

namespace tracetwin::core::text {

inline bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

inline bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// A file name meaning gzip: ".gz" in any case (T.JSON.GZ was written as
// plain text under its compressed name).
inline bool hasGzipSuffix(std::string_view path) {
  if (path.size() < 3) return false;
  const std::string_view tail = path.substr(path.size() - 3);
  return tail[0] == '.' && (tail[1] == 'g' || tail[1] == 'G') && (tail[2] == 'z' || tail[2] == 'Z');
}

// Equality of short strings (keys, type names, devices: a few to ~30 bytes),
// byte by byte. string_view's == calls memcmp when the length is not a
// constant, and at these lengths the call costs more than the compare:
// memcmp was 3.7% of the cycles of inspect on a 27 MB trace (attribute names,
// "Tensor" prefixes, tensor devices), ~9 calls per node.
inline bool equalShort(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

inline bool startsWithShort(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && equalShort(s.substr(0, prefix.size()), prefix);
}

inline bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// ASCII control characters (0x00-0x1f, 0x7f): a terminal acts on them.
inline bool isControlCharacter(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }
inline bool hasControlCharacters(std::string_view s) {
  return std::any_of(s.begin(), s.end(), isControlCharacter);
}
// `s` with each control character written as \xNN.
inline std::string withControlCharactersEscaped(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    if (isControlCharacter(c)) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace tracetwin::core::text
