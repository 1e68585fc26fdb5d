// The original's host time around each top-level op, from its linked Kineto
// trace (`replay --kineto K --host-time recorded`): the gap before the op
// (T1, from the previous linked op's end) and the op's CPU span, less the
// profiler's own cost.
//
// The profiled step is not the step the original runs: the profiler records
// every op, nested call and launch, and each record costs host time. The
// bundled CPU captures' profiled steps span 1.1-1.7x their unprofiled steps
// (mlp 5.23 ms against 4.70, embbag 5.27 against 3.07, ~4,000 events), and
// the H100 lstm capture's host loop 10.9 ms against a 3.44 ms step. Replaying
// the host time as recorded would reproduce the profiler. When the unprofiled
// step is known (the capture's meta file) and the recorded host span is
// longer, a cost per recorded CPU event (cpu_op, user_annotation, runtime
// and driver calls) is found such that removing it from the op whose span
// holds the event, or from the gap it falls in, makes the span the
// unprofiled step; each gap and op keeps at least zero. The cost is one
// number per capture, so how it splits between ops follows where the events
// are (an op with nested calls and launches loses more).
//
// A host span shorter than the unprofiled step (a device-bound step, whose
// host waits at the end) gets no correction: the host time is as recorded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/kineto/kineto_trace.h"
#include "core/kineto/linker.h"

namespace tracetwin::core::kineto {

struct RecordedHostOp {
  NodeId id = kNoNode;
  std::string name;
  double gap_us = 0;  // after the correction
  double op_us = 0;
  double recorded_gap_us = 0;  // as recorded
  double recorded_op_us = 0;
  int64_t gap_events = 0;  // recorded CPU events in the gap before the op
  int64_t op_events = 0;   // in the op's span (itself, nested ops, launches)
};

struct RecordedHostTime {
  std::vector<RecordedHostOp> ops;  // the linked ops, in execution order
  double recorded_span_ms = 0;      // the sum of gaps and ops as recorded
  double span_ms = 0;               // after the correction
  double unprofiled_ms = 0;         // the original's step without a profiler; 0: unknown
  double profiler_us_per_event = 0;  // the cost removed per event; 0: none
  int64_t events = 0;                // recorded CPU events in the host span
  // The first op's gap runs from the ProfilerStep's start (Python before the
  // step's first op); without a ProfilerStep span it is 0.
  bool lead_in = false;
};

// `unprofiled_ms` <= 0: no correction.
RecordedHostTime recordedHostTime(const LinkedTimeline& timeline, const KinetoTrace& trace,
                                  double unprofiled_ms);

// The per-event cost c that makes sum(max(0, gap - c * gap_events) +
// max(0, op - c * op_events)) equal `target_us` (bisection; the sum falls as c
// grows); 0 when the recorded sum is already at or under it.
double profilerCostPerEvent(const std::vector<RecordedHostOp>& ops, double target_us);

}  // namespace tracetwin::core::kineto
