// The replay's side of `--timeline` (timeline/timeline.h): a ReplayResult,
// or a rank's replay report as rank 0 of a distributed replay gathers it,
// as a View (writing the file: cli/timeline_file.h). Torch-free, but only
// tracetwin-replay, which replays, uses it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

#include "cli/timeline_file.h"
#include "replay/replayer.h"
#include "timeline/sources.h"
#include "timeline/timeline.h"

namespace tracetwin::cli {

// The last measured iteration: each op on the replay's thread at its start
// and for its time in that iteration; on CUDA its kernels, memcpys and
// memsets on their streams. The device's clock is not the host's: the
// kernels are placed so that the first one starts when the op that launched
// it did (the earliest it can have).
timeline::View replayView(const replay::ReplayResult& result, int rank = -1);

// A rank's view from its report (replay/result_json.h, with "distributed"):
// its ops, and each collective's wait for the other ranks inside the op.
// Reports carry no kernels: on CUDA the other ranks show their CPU side.
// Throws InputError naming the rank when the report lacks per_op.
timeline::View replayViewFromReport(const nlohmann::json& report, int rank);

// What each op measured (device time on a device, else its time), for the
// prediction's error per op.
std::unordered_map<core::NodeId, timeline::Measured> measuredOf(const replay::ReplayResult& r);

}  // namespace tracetwin::cli
