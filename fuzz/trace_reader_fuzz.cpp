// libFuzzer entry point for the execution-trace reader: any input must end in
// a Graph or a tracetwin::Error; crashes, hangs, leaks and sanitizer reports
// are bugs. Gzip input goes through the same path as files do.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/errors.h"
#include "core/gzip_file.h"
#include "core/graph.h"
#include "core/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    std::string plain;
    if (tracetwin::core::isGzip(bytes)) {
      plain = tracetwin::core::gunzip(bytes, "fuzz.json.gz", 64);
      bytes = plain;
    }
    const tracetwin::core::Graph g = tracetwin::core::parseTrace(bytes, "fuzz.json");
    const tracetwin::core::Selection sel = tracetwin::core::selectTopLevelOps(g);
    for (tracetwin::core::NodeId id : sel.ops) (void)g.node(id);
  } catch (const tracetwin::Error&) {
    // Refusing bad input with a typed error is the expected outcome.
  }
  return 0;
}
