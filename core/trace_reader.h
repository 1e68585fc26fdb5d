// Reads execution traces (.json / .json.gz, every schema of DESIGN.md) into a Graph.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/graph.h"

namespace tracetwin::core {

// Schema strings the reader knows. A newer minor version of a known major is
// read with a warning in Graph::warnings; anything else is refused.
const std::vector<std::string>& knownSchemas();

// Reads a whole file (gzip detected by magic bytes, not by name) and returns
// its bytes, decompressed. Throws InputError naming the file on I/O or gzip
// errors.
std::string readMaybeGzipFile(const std::string& path);

// Parses an ET document held in memory. `source` names it in errors.
// Throws InputError with the byte offset or node id and what was expected.
Graph parseTrace(std::string_view json, const std::string& source);

// Reads a trace file: a JSON ET, or a Chakra protobuf ET (core/chakra/
// chakra_trace.h), gzip or not, each told by its first bytes.
Graph readTrace(const std::string& path);

// Reads a JSON trace file (gzip or not, told by its first bytes) while parsing it,
// `chunk_bytes` at a time: the text and simdjson's index of it are never held
// whole. Same Graph and same errors as parseTrace on the file's text (offsets
// of errors in the top-level keys after "nodes" are approximate).
// readTrace with another chunk size (tests cut the text at every position).
// `threads`: how many threads parse the nodes; 0 picks by size (files of a
// 1.5 MiB and up get the usable cores, up to 8; TRACETWIN_READER_THREADS
// overrides), 1 reads on the calling thread. The Graph and the errors are
// the same either way.
Graph readTraceStreaming(const std::string& path, size_t chunk_bytes = size_t{256} << 10,
                         unsigned threads = 0);

}  // namespace tracetwin::core
