// What `tracetwin export --chakra` writes for each top-level op of one
// iteration: the Chakra node type (COMP, COMM_COLL, COMM_SEND/RECV,
// MEM_LOAD/STORE), its duration from the chosen source, its data
// dependencies, and for collectives the Chakra collective type, bytes and
// process group (read with core/comm/collective_spec.h, the distributed
// replay's parsing). Torch-free (the plan is core's ExportPlan); the rules
// are in docs/timeline.md, "Chakra ET".
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "core/chakra/chakra_trace.h"
#include "core/graph.h"

namespace tracetwin::cli {

// One op's times from a source, microseconds.
struct OpTime {
  double device_us = 0;  // kernels (0 on a CPU, or an op without kernels)
  double cpu_us = 0;     // the op's host span
  double start_us = -1;  // from the iteration start; < 0 unknown
};

struct DurationSource {
  std::string name;  // "kineto", "replay", "prediction", "none"
  // The times are a device's: a node's duration is its device time where it
  // has one (is_cpu_op false), else its host time (is_cpu_op true).
  bool device = false;
  std::unordered_map<core::NodeId, OpTime> ops;
};

// The plan for `graph` (its top-level ops, core::selectTopLevelOps). `rank`
// and `world_size` are written into the file's metadata and send/recv ends
// (-1 when unknown).
core::chakra::ExportPlan buildExportPlan(const core::Graph& graph, const DurationSource& durations,
                                         int64_t rank, int64_t world_size);

}  // namespace tracetwin::cli
