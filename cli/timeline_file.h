// Writing a --timeline file (timeline/trace_events.h) with the one-line
// summary every command prints: the views, slices, flows, size and the time
// it took. Torch-free: `predict --timeline` runs in tracetwin.
#pragma once

#include <string>

#include "timeline/timeline.h"

namespace tracetwin::cli {

// Writes the file and prints "timeline: PATH (...)" with its size and the
// time it took.
void writeTimelineFile(const std::string& path, const timeline::Timeline& timeline);

}  // namespace tracetwin::cli
