// A Timeline as a Chrome / Perfetto JSON trace ("trace event format"): one
// process per view, one thread per track, complete ("X") events for slices,
// flow events ("s"/"f") from an op to its kernels, and the metadata events
// that name and order processes and threads. docs/timeline.md lists the
// format's rules this writer keeps and trace_checks.h checks.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "timeline/timeline.h"

namespace tracetwin::timeline {

struct WriteInfo {
  int64_t slices = 0;
  int64_t flows = 0;
  // Slices that overlapped the one before them on a track without fitting
  // inside it, cut at its end so that every track nests (args.clipped_us
  // says by how much): the trace-event format draws a track as a stack.
  int64_t clipped = 0;
  uint64_t bytes = 0;  // of the file written
};

// {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}.
// Times are rounded to nanoseconds; each track's slices are sorted by start
// (a longer slice first where two start together) and nested.
nlohmann::json toTraceEvents(const Timeline& timeline, WriteInfo* info = nullptr);

// Writes toTraceEvents to `path`, gzip-compressed when it ends in ".gz".
// Throws InputError naming the path when it cannot be written.
WriteInfo writeTimeline(const std::string& path, const Timeline& timeline);

}  // namespace tracetwin::timeline
