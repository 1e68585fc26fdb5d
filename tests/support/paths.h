// Where tests find their inputs. Paths are baked in by tests/CMakeLists.txt
// (compile definitions of each suite, so this header stays header-only).
#pragma once

#include <string>

namespace tracetwin::testing {

inline std::string sourcePath(const std::string& rel) {
  return std::string(TRACETWIN_SOURCE_DIR) + "/" + rel;
}
inline std::string sharedTrace(const std::string& name) {
  return std::string(TRACETWIN_SHARED_TRACES) + "/" + name;
}
inline std::string dataPath(const std::string& name) { return sourcePath("data/" + name); }
inline std::string tracetwinBinary() { return TRACETWIN_BINARY; }

}  // namespace tracetwin::testing
