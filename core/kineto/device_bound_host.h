// How long the original's host loop really took when its device, not its
// host, bounded the step.
//
// The recorded host time (core/kineto/recorded_host_time.h) takes the
// profiler's own cost off until the host span equals the unprofiled step.
// That holds for a host-bound step. A device-bound step's host runs ahead of
// its kernels and then waits, so its unprofiled host loop is shorter than
// the step by an amount the step time alone does not tell. Forcing the host
// span to the step replayed an H100 CNN step (device busy 7.1 of 7.6 ms,
// profiled host span 11.7 ms) with 7.6 ms of host time spread in the
// profiled proportions, so its first big kernels started ~2 ms late:
// 11.4 ms replayed against 7.6 (x1.50), where the plain replay gave 0.95.
//
// What the trace does tell is how the step follows from a host span: the
// recorded kernels on their streams, each starting when its launch happens
// and its stream is free, the host waiting at each synchronising call until
// the device is done. `simulatedStep` plays that with the host's gaps and
// ops corrected for a candidate host span H (the same per-event correction);
// the step it gives does not fall as H grows. The host span is then the
// largest H whose simulated step is the unprofiled one:
//   - host-bound step: H = the step (as before), the kernels trail the host;
//   - device-bound step: the H at which the host starts to lengthen the
//     device's step, found by bisection;
//   - the device alone longer than the step (its kernels ran slower under the
//     profiler): the knee, the largest H that keeps the device-only step.
// Checked against three H100 CNN steps without synchronising calls
// (data/h100/s31): aimed at the step, the simulation gives 1.522, 1.459 and
// 1.461 of it, and the replays measured 1.528, 1.454 and 1.459. Steps with
// synchronising calls keep the step as their replay target (see the .cpp);
// their T1-T5 for a prediction take the simulated span.
#pragma once

#include <cstdint>
#include <vector>

#include "core/kineto/kineto_trace.h"
#include "core/kineto/linker.h"
#include "core/kineto/recorded_host_time.h"

namespace tracetwin::core::kineto {

// The device work and synchronisations of one linked op, in the op's own
// recorded time (microseconds from its start).
struct OpDeviceWork {
  struct Kernel {
    double launch_offset_us = 0;  // the launch's start, from the op's start
    int64_t stream = kAbsent;
    double duration_us = 0;
  };
  struct Sync {
    double offset_us = 0;  // the synchronising call's start, from the op's start
    double recorded_us = 0;  // its recorded duration (a wait, not host work)
  };
  std::vector<Kernel> kernels;  // in launch order
  std::vector<Sync> syncs;      // in time order
};

// One entry per RecordedHostOp of `host` (same order): the kernels each op
// launched and the synchronising runtime calls (cuda*Synchronize, cudaMemcpy)
// made inside its span on its thread.
std::vector<OpDeviceWork> opDeviceWork(const LinkedTimeline& timeline, const KinetoTrace& trace,
                                       const RecordedHostTime& host);

// The step the host of `ops`, corrected by `fix`, and the recorded device
// work give: the host's end or the last kernel's end, whichever is later.
double simulatedStepUs(const std::vector<RecordedHostOp>& ops,
                       const std::vector<OpDeviceWork>& work, const ProfilerCorrection& fix);

struct HostSpanTarget {
  double host_us = 0;            // the host span to correct the recorded one to
  bool device_bound = false;     // the step limited it below the unprofiled step
  double simulated_step_us = 0;  // the step simulated with that host span
  double device_only_us = 0;     // the step simulated with no host time at all
  // The step has synchronising calls: no shorter span is aimed at, since the
  // replay's own catch-up is not what the simulation plays (see the .cpp).
  bool sync_calls = false;
};

// The host span for an unprofiled step of `step_us` (see the header comment).
// A step without device work, one whose simulated step at min(recorded,
// step) is within 2% of the step, or one with synchronising calls unless
// `synchronising_steps` keeps min(recorded, step) (recordedHostTime's
// HostTimeFor says who wants which).
HostSpanTarget hostSpanTarget(const std::vector<RecordedHostOp>& ops, int64_t events,
                              const std::vector<OpDeviceWork>& work, double step_us,
                              bool synchronising_steps = false);

}  // namespace tracetwin::core::kineto
