// Internal to the linker: GPU activities -> the ET node that launched them.
#pragma once

#include <unordered_map>

#include "core/graph.h"
#include "core/kineto/kineto_trace.h"
#include "core/kineto/linker.h"
#include "core/kineto/trace_index.h"

namespace tracetwin::core::kineto {

// ET node id -> Kineto event index.
using NodeMatch = std::unordered_map<NodeId, size_t>;

// Fills out.ops[*].kernels, out.labels, out.kernels*, out.streams. A launch
// inside the CPU window of the linked top-level ops goes to the top-level op
// enclosing it on its thread; failing that, to the innermost linked ET label
// enclosing it (LabelKernels); failing that, it stays unattributed.
void attributeKernels(const Graph& graph, const KinetoTrace& trace, const TraceIndex& index,
                      const NodeMatch& match, LinkedTimeline& out);

}  // namespace tracetwin::core::kineto
