// read_trace TRACE: reads one trace with core::readTrace and prints what it
// found. A process with nothing but the reader in it, so that its peak RSS
// (scripts/measure-reader-memory.sh) is the reader's, not LibTorch's.
#include <fmt/core.h>

#include <chrono>
#include <exception>

#include "core/errors.h"
#include "core/trace_reader.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: read_trace TRACE\n");
    return 2;
  }
  try {
    const auto t0 = std::chrono::steady_clock::now();
    const tracetwin::core::Graph g = tracetwin::core::readTrace(argv[1]);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("{{\"nodes\": {}, \"top_level_ops\": {}, \"tensors\": {}, \"parse_ms\": {:.1f}}}\n",
               g.nodes().size(), tracetwin::core::selectTopLevelOps(g).ops.size(),
               g.tensors().size(), ms);
    return 0;
  } catch (const tracetwin::InputError& e) {
    fmt::print(stderr, "read_trace: error: {}\n", e.what());
    return 2;
  }
}
