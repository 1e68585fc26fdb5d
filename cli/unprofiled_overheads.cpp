#include "cli/unprofiled_overheads.h"

#include <fmt/core.h>

#include "core/kineto/recorded_host_time.h"
#include "replay/trace_meta.h"

namespace tracetwin::cli {

UnprofiledOverheads unprofiledOverheads(const std::string& et_path,
                                        const core::kineto::LinkedTimeline& timeline,
                                        const core::kineto::KinetoTrace& trace) {
  UnprofiledOverheads out;
  const auto meta = replay::readTraceMeta(et_path);
  if (!meta || meta->iteration_ms <= 0) {
    out.note = fmt::format(
        "{}: no meta file with the unprofiled step time: the profiler's cost is not measured",
        et_path);
    return out;
  }
  const core::kineto::RecordedHostTime h =
      core::kineto::recordedHostTime(timeline, trace, meta->iteration_ms,
                                     core::kineto::HostTimeFor::kPrediction);
  if (h.profiler_us_per_event > 0 || h.profiler_scale != 1.0) {
    out.host_us = h.span_ms * 1000.0;
    out.device_bound = h.device_bound;
    out.note = fmt::format(
        "{}: T1-T5 of the unprofiled step: the profiler's cost taken off (host span {:.3f} ms "
        "profiled{}, {:.3f} ms unprofiled{})",
        et_path, h.recorded_span_ms,
        h.profiler_stall_ms > 0
            ? fmt::format(" after {:.3f} ms of the profiler's stalls", h.profiler_stall_ms)
            : "",
        h.span_ms,
        h.device_bound
            ? fmt::format(", device-bound: the span whose kernels give the {:.3f} ms step",
                          h.unprofiled_ms)
            : "");
  } else {
    out.note = fmt::format(
        "{}: host span {:.3f} ms not longer than the unprofiled step {:.3f} ms: the step does not "
        "tell the profiler's cost",
        et_path, h.recorded_span_ms, meta->iteration_ms);
  }
  return out;
}

}  // namespace tracetwin::cli
