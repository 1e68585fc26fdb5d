// The paths are compile definitions of this file alone: a clone elsewhere
// recompiles one file, and every suite's objects stay the same (compiler
// caches hit across checkouts; see the Makefile's ccache settings).
#include "tests/support/paths.h"

namespace tracetwin::testing {

std::string sourcePath(const std::string& rel) {
  return std::string(TRACETWIN_SOURCE_DIR) + "/" + rel;
}
std::string sharedTrace(const std::string& name) {
  return std::string(TRACETWIN_SHARED_TRACES) + "/" + name;
}
std::string dataPath(const std::string& name) { return sourcePath("data/" + name); }
std::string tracetwinBinary() { return TRACETWIN_BINARY; }

}  // namespace tracetwin::testing
