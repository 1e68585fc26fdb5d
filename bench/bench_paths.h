// Where the benchmarks find their inputs: the source tree and the shared
// traces beside it, as CMake configured them. The paths live in one small
// file (bench_paths.cpp) so that only it carries the checkout's path: a
// definition on each benchmark's command line made the compiler cache miss
// every benchmark in each fresh clone.
#pragma once

#include <string>

namespace tracetwin::bench {

// SOURCE_DIR/rel
std::string sourcePath(const std::string& rel);
// SOURCE_DIR/../shared/traces/name
std::string sharedTrace(const std::string& name);

}  // namespace tracetwin::bench
