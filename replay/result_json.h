// ReplayResult as JSON (--json-out) and as a Chrome/Perfetto trace
// (--chrome-trace). Torch-free: the CLI and calibration use it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "replay/replayer.h"

namespace tracetwin::replay {

// Keys: device, threads, iterations_ms, iteration_ms_median, selected_ops,
// replayed_ops, coverage, skipped, failed, substitutions, overload_mappings,
// per_op, peak_memory_bytes, trace_peak_bytes, interrupted, host_time;
// `distributed` (distributedToJson) on one rank of a distributed replay; and
// "compiled" (compiledReplayJson) when the trace has compiled regions or
// Triton kernels.
nlohmann::json replayResultToJson(const ReplayResult& result);

// The "host_time" object: {"mode", "scale"} and, for --host-time recorded or
// model, what was added (replay/host_time.h).
nlohmann::json hostTimeToJson(const HostTimeUse& h);

// Keys: rank, world_size, local_rank, launcher, backend, host, comm_ops,
// comm_ms, wait_ms, transfer_ms, wait_mean_ms, transfer_mean_ms, collectives
// [{id, name, group, bytes, wait_us, transfer_us, wait_mean_us,
// transfer_mean_us}], backend_notes, step_ms, step_ms_median, step_ms_mean,
// straggler.
nlohmann::json distributedToJson(const dist::DistributedSummary& d);

// kernels, forward_kernels, backward_kernels, launched_from_cache,
// stood_in_recorded, stood_in_predicted, not_stood_in, stood_in_*_us,
// inductor_cache, waits_on, regions, regions_without_kernels, warnings.
nlohmann::json compiledReplayJson(const CompiledReplay& compiled);

// One replayed iteration (the last measured one) as Chrome trace events:
// ops as complete events on the CPU thread (pid `pid`), kernels on one track
// per stream. Process and thread names are included as metadata events.
nlohmann::json chromeTraceEvents(const ReplayResult& result, int pid = 1,
                                 const std::string& process_name = "tracetwin replay");

// Writes {"traceEvents": events + extra_events}. Throws InputError naming the
// path when it cannot be written.
void writeChromeTrace(const std::string& path, const ReplayResult& result,
                      const nlohmann::json& extra_events = nlohmann::json::array());

}  // namespace tracetwin::replay
