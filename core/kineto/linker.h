// Links an execution trace (ET) with the Kineto trace of the same run
// (DESIGN.md "Kineto linking"): ET op <-> cpu_op by rf_id <-> "Record function
// id" when the Kineto trace has it, else by a per-thread sequence alignment of
// op names (core/kineto/sequence_alignment.h); kernels <-> launches by
// correlation; launches <-> the top-level op enclosing them on their thread.
// The result is the original timeline of one iteration: the ground truth for
// fidelity reports and the raw data of the overhead and kernel models.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/kineto/kineto_trace.h"

namespace tracetwin::core::kineto {

struct LinkedKernel {
  std::string name;
  EventCategory category = EventCategory::kKernel;  // kernel, memcpy or memset
  int64_t stream = kAbsent;
  int64_t device = kAbsent;
  double start_us = 0;  // Kineto timestamp (absolute)
  double duration_us = 0;
  int64_t correlation = kAbsent;
  std::string launch_api;  // "cudaLaunchKernel" ...
};

// One top-level op of the ET (core::selectTopLevelOps) and what the original
// run did for it.
struct LinkedOp {
  NodeId id = kNoNode;
  std::string name;
  int64_t et_tid = -1;
  bool matched = false;
  int64_t kineto_tid = kAbsent;
  int64_t event = -1;   // index into KinetoTrace::events
  double start_us = 0;  // original CPU span (absolute Kineto time)
  double duration_us = 0;
  std::vector<LinkedKernel> kernels;  // in launch order
  double device_us = 0;               // sum of kernel / memcpy / memset durations
};

// Kernels launched directly by an ET label - outside every top-level op -
// such as the backward of a custom autograd function (FBGEMM's
// "torch::autograd::CppNode<SplitLookupFunction_Dense_Op>" in the DLRM
// traces), which the ET records with no operator node under it. Replay
// cannot run these; they are kept so the original timeline stays whole.
struct LabelKernels {
  NodeId id = kNoNode;  // the innermost linked ET label enclosing the launches
  std::string name;
  int64_t kineto_tid = kAbsent;
  std::vector<LinkedKernel> kernels;
  double device_us = 0;
};

struct ThreadLink {
  int64_t et_tid = -1;
  int64_t kineto_tid = kAbsent;
  int64_t et_nodes = 0;  // ET nodes on this thread (labels included)
  int64_t matched_nodes = 0;
  // Alignment only: whether autograd sequence numbers guided it, and the
  // Kineto-minus-ET offset found between them (0: same iteration).
  bool uses_sequence_numbers = false;
  int64_t sequence_offset = 0;
};

struct LinkedTimeline {
  std::string et_source;
  std::string kineto_source;
  std::string method;         // "record_function_id" or "name_alignment"
  std::vector<LinkedOp> ops;  // top-level ops, execution order
  std::vector<ThreadLink> threads;
  int64_t top_level_ops = 0;
  int64_t matched_ops = 0;
  double match_rate = 0;  // matched_ops / top_level_ops
  int64_t all_nodes = 0;  // every ET node that took part (labels too)
  int64_t all_nodes_matched = 0;
  // GPU activities launched inside the linked ops' CPU window; how many were
  // attributed to an ET node (kernels_matched = kernels_in_ops +
  // kernels_in_labels), and of those how many to a top-level op.
  int64_t kernels = 0;
  int64_t kernels_matched = 0;
  int64_t kernels_in_ops = 0;
  int64_t kernels_in_labels = 0;
  // GPU activities anywhere in the trace whose launch it does not hold (no
  // correlation, or one no runtime/driver call has): their ops' device time
  // cannot be known. The DLRM traces' ranks 1 and 3 have 64 of ~330 (a step
  // boundary); a trace stripped of its launches had all of them, silently.
  int64_t unlaunched_activities = 0;
  int64_t activities = 0;
  std::vector<LabelKernels> labels;
  std::vector<int64_t> streams;  // streams the attributed kernels ran on
  // Iteration: the ProfilerStep#N span holding most linked ops when there is
  // one, else the traced span (first op start .. last op or kernel end).
  double iteration_start_us = 0;
  double iteration_end_us = 0;
  double iteration_ms = 0;
  std::string iteration_source;  // "ProfilerStep#10" or "traced span"
  int64_t rank = -1;             // distributedInfo.rank when present
};

struct LinkOptions {
  // Force name alignment even when Record function ids exist (tests).
  bool force_alignment = false;
};

// Throws InputError when none of the ET's top-level ops is in the trace (an
// empty trace, or another program's): every time read from it would be 0.
LinkedTimeline linkTraces(const Graph& graph, const KinetoTrace& trace,
                          const LinkOptions& options = {});

// Traces of one run link 97.9-100% of their top-level ops (the bundled CPU
// and GPU pairs); under this share the Kineto trace is most likely of
// another run or step, whose ops merely share names with the ET's.
inline constexpr double kWeakLinkShare = 0.9;
// "" or a warning that the link is weak (match_rate under kWeakLinkShare).
std::string weakLinkWarning(const LinkedTimeline& timeline);

}  // namespace tracetwin::core::kineto
