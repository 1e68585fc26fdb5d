// One timeline of an iteration seen three ways - the original run (a linked
// Kineto trace), a replay, a prediction - and, for multi-rank runs, per rank:
// a View per (source, rank), tracks per CPU thread and device stream, slices
// on them. trace_events.h writes it as a Chrome/Perfetto trace;
// docs/timeline.md says what each track and slice is. Torch-free: `predict`
// writes it from a build without LibTorch.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/graph.h"

namespace tracetwin::timeline {

// One complete event on a track. Times are microseconds from the start of
// the view's iteration (every view starts at 0: the three line up).
struct Slice {
  std::string name;      // the ET op name on every view, so one op reads (and colours) alike
  std::string category;  // "cpu_op", "kernel", "gpu_memcpy", "gpu_memset", "collective", "wait"
  double start_us = 0;
  double dur_us = 0;
  core::NodeId node = core::kNoNode;               // the ET node (op) it belongs to
  std::string family;                              // core::opFamily of that op; empty for waits
  nlohmann::json args = nlohmann::json::object();  // shown on click
};

struct Track {
  enum class Kind { kCpu, kDevice };
  Kind kind = Kind::kCpu;
  int64_t id = 0;    // CPU thread id, or stream number
  std::string name;  // "CPU thread 1", "stream 7"
  std::vector<Slice> slices;
};

struct View {
  std::string source;  // "original", "replay", "prediction"
  int rank = -1;       // -1: a single-process run
  std::string detail;  // what it was made from: "Kineto trace x.json.gz", "replay on cpu" ...
  double iteration_us = 0;
  std::vector<Track> tracks;

  // The track of that kind and id, made (named `name`) when absent.
  Track& track(Track::Kind kind, int64_t id, const std::string& name);
};

// One collective across ranks: its op on each member's view. The writer
// draws a flow arrow from each member that waited to the member the group
// waited for, so a click leads from a waiting rank to the straggler.
struct CollectiveLink {
  std::string name;  // "all_reduce #3 (default group)"
  struct Member {
    size_t view = 0;  // index into Timeline::views
    core::NodeId node = core::kNoNode;
  };
  std::vector<Member> members;
  size_t last = 0;  // index into members: the one the others waited for
};

struct Timeline {
  std::vector<View> views;
  std::vector<CollectiveLink> collectives;
  std::vector<std::string> notes;  // written into otherData.notes
};

}  // namespace tracetwin::timeline
