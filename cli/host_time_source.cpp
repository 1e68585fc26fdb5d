#include "cli/host_time_source.h"

#include <fmt/core.h>

#include "core/errors.h"
#include "predictors/host/overheads.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/predictor.h"

namespace tracetwin::cli {

HostTimeTargets recordedHostTargets(const core::kineto::LinkedTimeline& timeline,
                                    const core::kineto::KinetoTrace& trace, double unprofiled_ms,
                                    const std::string& kineto_path) {
  HostTimeTargets out;
  out.recorded = core::kineto::recordedHostTime(timeline, trace, unprofiled_ms);
  const core::kineto::RecordedHostTime& h = *out.recorded;
  for (const core::kineto::RecordedHostOp& op : h.ops) out.by_op[op.id] = {op.gap_us, op.op_us};
  out.source = fmt::format("{} ({} of {} top-level ops linked, {})", kineto_path,
                           timeline.matched_ops, timeline.top_level_ops, timeline.method);
  const bool corrected = h.profiler_us_per_event > 0 || h.profiler_scale < 1.0;
  if (corrected) {
    out.notes.push_back(fmt::format(
        "the profiler's own cost taken off: {:.3f} us per recorded CPU event ({} events){}; the "
        "recorded host span {:.3f} ms -> {:.3f} ms, the original's unprofiled step {:.3f} ms",
        h.profiler_us_per_event, h.events,
        h.profiler_scale < 1.0
            ? fmt::format(", then x{:.3f} on what no event count explains", h.profiler_scale)
            : "",
        h.recorded_span_ms, h.span_ms, h.unprofiled_ms));
  }
  if (h.device_bound) {
    out.notes.push_back(fmt::format(
        "device-bound original: its recorded kernels alone take {:.3f} ms, and a host loop of "
        "{:.3f} ms is the longest that, with them, gives the unprofiled step ({:.3f} ms "
        "simulated): the host time is aimed at that, not at the step",
        h.device_only_ms, h.target_ms, h.simulated_step_ms));
  }
  if (!h.device_bound && h.sync_calls && h.simulated_step_ms > 1.02 * h.unprofiled_ms) {
    out.notes.push_back(fmt::format(
        "the recorded kernels with this host time simulate a {:.3f} ms step (the device alone "
        "{:.3f} ms), over the original's {:.3f} ms, but the step has synchronising calls, whose "
        "waits the replay takes back itself: the host time aims at the step",
        h.simulated_step_ms, h.device_only_ms, h.unprofiled_ms));
  }
  if (!corrected && !h.device_bound && h.unprofiled_ms > 0) {
    out.notes.push_back(fmt::format(
        "recorded host span {:.3f} ms, not longer than the unprofiled step {:.3f} ms (the device "
        "or time outside the ops bounds it): host time as recorded",
        h.recorded_span_ms, h.unprofiled_ms));
  } else if (h.unprofiled_ms <= 0) {
    out.notes.push_back(fmt::format(
        "no unprofiled step time (meta file) beside the trace: host time as recorded ({:.3f} ms), "
        "the profiler's own cost included",
        h.recorded_span_ms));
  }
  if (timeline.matched_ops < timeline.top_level_ops) {
    out.notes.push_back(fmt::format(
        "{} top-level ops are not linked to the Kineto trace: their original time is in the next "
        "linked op's gap",
        timeline.top_level_ops - timeline.matched_ops));
  }
  return out;
}

HostTimeTargets modelHostTargets(const core::Graph& graph, const std::string& models_dir,
                                 const std::string& overheads_path, const std::string& device) {
  const predictors::ModelSet models = predictors::ModelSet::load(models_dir);
  const bool cpu_replay = device == "cpu";
  const bool cpu_models = models.device.kind == predictors::DeviceKind::kCpu;
  if (cpu_replay != cpu_models) {
    throw UsageError(fmt::format(
        "--host-time model: the models in {} are for a {} ({}), the replay runs on {}; give "
        "models calibrated on the replaying device",
        models_dir, predictors::deviceKindName(models.device.kind), models.device.name, device));
  }
  predictors::PredictOptions opts;
  if (!overheads_path.empty()) opts.overheads = predictors::loadOverheads(overheads_path);
  const predictors::Prediction p = predictors::predictGraph(graph, models, opts);
  HostTimeTargets out;
  for (const predictors::OpPrediction& o : p.per_op) out.by_op[o.id] = {o.gap_us, o.host_us};
  out.source = fmt::format("the prediction with {} ({}; T1-T5 from {})", models_dir,
                           models.device.name,
                           overheads_path.empty() ? "the model set" : overheads_path);
  out.notes = p.notes;
  if (cpu_replay) {
    out.notes.push_back(
        "on a CPU an op's own host time is its predicted time: the replay waits where the "
        "models put an op above its replayed call, and for the between-op terms beyond the "
        "replay's own");
  }
  return out;
}

}  // namespace tracetwin::cli
