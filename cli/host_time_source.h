// Where `replay --host-time` takes the original's host time from, per op
// (replay/host_time.h): "recorded", the linked Kineto trace of the original
// less the profiler's own cost (core/kineto/recorded_host_time.h); "model",
// the prediction's CPU side for this host (T1-T5 of the CPU-overhead model,
// predictors/). Each rank of a distributed replay builds its own from its
// own trace, Kineto trace and meta file.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/graph.h"
#include "core/kineto/kineto_trace.h"
#include "core/kineto/linker.h"
#include "core/kineto/recorded_host_time.h"
#include "replay/host_time.h"

namespace tracetwin::cli {

struct HostTimeTargets {
  std::unordered_map<core::NodeId, replay::HostTarget> by_op;
  std::string source;              // one line: where they came from
  std::vector<std::string> notes;  // corrections, defaults, what has none
  std::optional<core::kineto::RecordedHostTime> recorded;  // "recorded" only
};

// From the linked timeline of `kineto_path`. `unprofiled_ms`: the original's
// step without the profiler (its meta file), 0 when unknown.
HostTimeTargets recordedHostTargets(const core::kineto::LinkedTimeline& timeline,
                                    const core::kineto::KinetoTrace& trace, double unprofiled_ms,
                                    const std::string& kineto_path);

// From predictGraph with the model set in `models_dir` (and the T1-T5 of
// `overheads_path` when given, a `tracetwin link --overheads-out` file of
// the original). Throws UsageError when the models are for another kind of
// device than `device` ("cpu", "cuda", "cuda:N").
HostTimeTargets modelHostTargets(const core::Graph& graph, const std::string& models_dir,
                                 const std::string& overheads_path, const std::string& device);

}  // namespace tracetwin::cli
