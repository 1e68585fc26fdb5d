// libFuzzer entry point for the execution-trace reader: any input must end in
// a Graph or a tracetwin::Error; crashes, hangs, leaks and sanitizer reports
// are bugs. Gzip input goes through the same path as files do. Plain input is
// also read by the streaming reader (in 64-byte chunks, from a memfd), which
// must agree with the whole-document reader: both refuse, or both give the
// same nodes.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/errors.h"
#include "core/graph.h"
#include "core/gzip_file.h"
#include "core/trace_reader.h"

namespace {

// Node count, or -1 when the reader refused the input.
long readWhole(std::string_view bytes) {
  try {
    const tracetwin::core::Graph g = tracetwin::core::parseTrace(bytes, "fuzz.json");
    const tracetwin::core::Selection sel = tracetwin::core::selectTopLevelOps(g);
    for (tracetwin::core::NodeId id : sel.ops) (void)g.node(id);
    return static_cast<long>(g.nodes().size());
  } catch (const tracetwin::Error&) {
    return -1;  // refusing bad input with a typed error is the expected outcome
  }
}

long readStreaming(std::string_view bytes) {
  const int fd = ::memfd_create("fuzz-trace", 0);
  if (fd < 0) return -2;
  long result = -2;
  if (::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size())) {
    try {
      result = static_cast<long>(
          tracetwin::core::readTraceStreaming("/proc/self/fd/" + std::to_string(fd), 64)
              .nodes()
              .size());
    } catch (const tracetwin::Error&) {
      result = -1;
    }
  }
  ::close(fd);
  return result;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (tracetwin::core::isGzip(bytes)) {
    // libdeflate's whole-buffer gunzip against zlib's decompression while
    // parsing (readTrace's path): they must agree on every input.
    long whole = -1;
    try {
      const std::string plain = tracetwin::core::gunzip(bytes, "fuzz.json.gz", 64);
      whole = readWhole(plain);
    } catch (const tracetwin::Error&) {
    }
    const long streamed = readStreaming(bytes);
    if (streamed != -2 && whole != streamed) std::abort();
    return 0;
  }
  const long whole = readWhole(bytes);
  const long streamed = readStreaming(bytes);
  if (streamed != -2 && whole != streamed) std::abort();  // the two readers disagree
  return 0;
}
