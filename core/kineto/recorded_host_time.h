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
// longer, the excess is taken off in two steps:
//   1. per recorded CPU event (cpu_op, user_annotation, runtime and driver
//      calls): excess / events from the op whose span holds the event, or
//      from the gap it falls in, each keeping at least zero. What a profiler
//      costs is per record, so an op with nested calls and launches loses
//      more (adds5k: 0.20 us per event, 1.0 of each add's 1.2 us);
//   2. what the floor at zero kept is taken off every gap and op in
//      proportion: one-off costs of the profiled step that no event count
//      explains (the H100 lstm capture's first embedding took 2.7 ms and the
//      first backward op 2.3 ms of a 10.9 ms host span whose step runs in 3.4).
// The span is then the unprofiled step.
//
// A device-bound step's host loop is shorter than its step: the span the
// correction aims at is then the one with which the recorded kernels give the
// unprofiled step (core/kineto/device_bound_host.h). A host span already
// shorter than that gets no correction: the host time is as recorded.
#pragma once

#include <algorithm>
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
  double recorded_span_ms = 0;      // the sum of gaps and ops as recorded, stalls out
  double profiler_stall_ms = 0;     // the profiler's stalls taken out (profiler_stalls.h)
  double span_ms = 0;               // after the correction
  double unprofiled_ms = 0;         // the original's step without a profiler; 0: unknown
  double profiler_us_per_event = 0;  // step 1, the cost removed per event; 0: none
  double profiler_scale = 1.0;       // step 2, the factor on what was left
  int64_t events = 0;                // recorded CPU events in the host span
  // The span the correction aimed at: the unprofiled step, or less for a
  // device-bound step (device_bound), with the step simulated from it and
  // the recorded kernels, and the step the kernels alone give (0: no kernels).
  double target_ms = 0;
  bool device_bound = false;
  double simulated_step_ms = 0;
  double device_only_ms = 0;
  bool sync_calls = false;  // synchronising runtime calls (for a replay the step stays the target)
  // The first op's gap runs from the ProfilerStep's start (Python before the
  // step's first op); without a ProfilerStep span it is 0.
  bool lead_in = false;
};

// Who takes the corrected host time. They differ on a device-bound step with
// synchronising calls (core/kineto/device_bound_host.h): the replay's planner
// takes the excess of such a call's warm-up (a wait for a backlog of device
// work) out of its later waits, which stands in for the shorter span there
// (the H100 encoder and decoder steps replayed at 1.007-1.024 of their
// originals aimed at the step); a prediction has no such catch-up and needs
// the host loop itself (their T1-T5 predicted those steps at 1.13-1.32 aimed
// at the step, 1.00-1.05 at the simulated span).
enum class HostTimeFor { kReplay, kPrediction };

// `unprofiled_ms` <= 0: no correction.
RecordedHostTime recordedHostTime(const LinkedTimeline& timeline, const KinetoTrace& trace,
                                  double unprofiled_ms, HostTimeFor use = HostTimeFor::kReplay);

// One record of the profiler, what the correction charges per event: a CPU
// range or a runtime / driver call, the step's own ProfilerStep# span
// excepted (it encloses everything).
bool isProfilerRecord(const KinetoEvent& e);

struct ProfilerCorrection {
  double per_event_us = 0;
  double scale = 1.0;

  // A recorded interval holding `events` profiler records, corrected: the
  // cost per record taken off, floored at zero, then the scale.
  double apply(double recorded_us, int64_t events) const {
    return scale * std::max(0.0, recorded_us - per_event_us * double(events));
  }
};

// The two steps above for `ops` (their recorded_* and *_events) and `events`
// (their sum) against `target_us`; none when the recorded sum is at or under it.
ProfilerCorrection profilerCorrection(const std::vector<RecordedHostOp>& ops, int64_t events,
                                      double target_us);

// The correction that takes `ops` to a host span of `host_us`: as
// profilerCorrection, and for a span of 0 (a device-bound step whose device
// alone fills it) a scale of 0, leaving the host nothing.
ProfilerCorrection correctionForSpan(const std::vector<RecordedHostOp>& ops, int64_t events,
                                     double host_us);

}  // namespace tracetwin::core::kineto
