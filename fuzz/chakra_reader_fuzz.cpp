// Arbitrary bytes -> a Chakra ET read into a Graph (protobuf messages, the
// Python-literal node text, the ET reader behind it), then selection. Only
// tracetwin::Error may come out; anything else is a bug the fuzzer reports.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/chakra/chakra_trace.h"
#include "core/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const tracetwin::core::Graph g = tracetwin::core::chakra::parseChakraTrace(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    (void)tracetwin::core::selectTopLevelOps(g);
  } catch (const tracetwin::Error&) {
  }
  return 0;
}
