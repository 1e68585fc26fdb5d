// Replay fidelity against the original run: the linked Kineto timeline of the
// original (core/kineto/linker.h) next to a ReplayResult, per op family and
// per iteration. Torch-free: used by `tracetwin replay ET --kineto KINETO`
// and by `tracetwin link`.
//
// Typical use (replay command):
//   auto graph = core::readTrace(et_path);
//   auto original = core::kineto::linkTraces(graph, core::kineto::readKinetoTrace(kineto_path));
//   replay::ReplayResult result = replay::replayGraph(graph, options);
//   FidelityReport report = buildFidelityReport(original, result);
//   printFidelityReport(report, stdout);
//   json["fidelity"] = fidelityReportJson(report);
//   // side by side in one Chrome/Perfetto trace: the replay's events under
//   // its own pid, the original's under another:
//   auto events = originalTimelineTraceEvents(original, /*pid=*/1);
#pragma once

#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/kineto/linker.h"
#include "core/kineto/recorded_host_time.h"
#include "replay/replayer.h"

namespace tracetwin::cli {

// Ratios are replayed / original; 0 when the original side is 0.
struct FidelityFamilyRow {
  std::string family;          // core::opFamilyOfName: "gemm", "elementwise" ...
  int64_t ops = 0;             // ops of this family present on both sides
  double original_cpu_ms = 0;  // sum of original CPU spans
  double replay_cpu_ms = 0;    // sum of replayed cpu_us
  double cpu_ratio = 0;
  double original_device_ms = 0;  // sum of original kernel time
  double replay_device_ms = 0;    // sum of replayed device_us (0 on CPU replay)
  double device_ratio = 0;
  // With the host time around the ops: the original's gaps before them and
  // their spans (less the profiler's cost where it was removed), against the
  // replay's time before each call (its own and any --host-time wait) and
  // the calls. cpu_ratio is the same without it: calls against spans.
  double original_host_ms = 0;
  double replay_host_ms = 0;
  double host_ratio = 0;
};

// The host's loop over the iteration: the original's span from the first
// linked op (or its ProfilerStep's start) to the last one's end, against the
// replay's issue loop with and without the --host-time waits.
struct FidelityHostLoop {
  double original_ms = 0;           // gaps + ops, after the profiler correction
  double original_recorded_ms = 0;  // as recorded
  double replay_ms = 0;             // ReplayResult::host_loop_ms
  double replay_without_waits_ms = 0;
  double ratio = 0;
  double ratio_without_waits = 0;
};

struct FidelityReport {
  std::string replay_device;     // ReplayResult::device
  int64_t original_ops = 0;      // top-level ops of the ET
  int64_t original_matched = 0;  // of which linked to the Kineto trace
  int64_t compared_ops = 0;      // linked and replayed (matched by node id)
  double original_iteration_ms = 0;
  std::string original_iteration_source;  // "ProfilerStep#10" / "traced span"
  double replay_iteration_ms = 0;         // ReplayResult::iteration_ms_median
  double iteration_ratio = 0;
  std::vector<double> replay_iterations_ms;
  std::vector<FidelityFamilyRow> families;  // sorted by original time, largest first
  FidelityFamilyRow total;                  // family "total"
  std::string host_time_mode = "replayed";  // ReplayResult::host_time
  double host_scale = 1.0;
  double profiler_us_per_event = 0;  // removed from the original's host time
  FidelityHostLoop host_loop;
};

// `host`: the original's host time as the replay used it (--host-time
// recorded); null: taken from `original` as recorded.
FidelityReport buildFidelityReport(const core::kineto::LinkedTimeline& original,
                                   const replay::ReplayResult& replayed,
                                   const core::kineto::RecordedHostTime* host = nullptr);

// A readable table: one line per family, then the total and the iteration.
void printFidelityReport(const FidelityReport& report, std::FILE* out);

nlohmann::json fidelityReportJson(const FidelityReport& report);

// Chrome / Perfetto trace events ("traceEvents" entries) of the original
// iteration under process `pid`: one complete event per linked top-level op on
// its CPU thread, one per kernel on a "stream N" thread, plus process/thread
// name metadata. Times are microseconds from the original iteration start, so
// a replay written from 0 lines up with it.
nlohmann::json originalTimelineTraceEvents(const core::kineto::LinkedTimeline& original, int pid,
                                           const std::string& process_name = "original (Kineto)");

// The linked timeline as JSON: summary fields (top_level_ops, matched_ops,
// match_rate, kernels, kernels_matched, iteration_ms, streams ...) and, when
// `with_ops`, one entry per top-level op with its kernels.
nlohmann::json linkedTimelineJson(const core::kineto::LinkedTimeline& timeline, bool with_ops);

}  // namespace tracetwin::cli
