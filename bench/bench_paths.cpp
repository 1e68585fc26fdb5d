#include "bench/bench_paths.h"

namespace tracetwin::bench {

std::string sourcePath(const std::string& rel) {
  return std::string(TRACETWIN_SOURCE_DIR) + "/" + rel;
}

std::string sharedTrace(const std::string& name) {
  return std::string(TRACETWIN_SOURCE_DIR) + "/../shared/traces/" + name;
}

}  // namespace tracetwin::bench
