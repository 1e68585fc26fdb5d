// Prefix, suffix and substring tests on names (op names, labels, API names).
// C++17's string_view has none of them; seven .cpp files of core/ had their
// own copies, which a unity build also made clash.
#pragma once

#include <string_view>

namespace tracetwin::core::text {

inline bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

inline bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

inline bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

}  // namespace tracetwin::core::text
