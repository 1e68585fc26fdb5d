// Where tests find their inputs: the source tree, the shared traces beside it
// and the built binary, as CMake configured them.
#pragma once

#include <string>

namespace tracetwin::testing {

std::string sourcePath(const std::string& rel);
std::string sharedTrace(const std::string& name);
std::string dataPath(const std::string& name);
std::string tracetwinBinary();

}  // namespace tracetwin::testing
