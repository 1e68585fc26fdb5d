// `tracetwin replay TRACE [--device] [--warmup] [--iters] [--threads] [--strict]
//  [--json-out FILE] [--chrome-trace FILE] [--kineto KINETO] [--inductor-cache DIR]
//  [--models DIR] [--host-time replayed|recorded|model] [--host-scale F]
//  [--overheads FILE]`: re-executes
// one iteration of the trace through LibTorch and reports its timing,
// coverage and memory, beside the original run when its meta file exists.
#include <fmt/core.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/command_registry.h"
#include "cli/compiled_standins.h"
#include "cli/fidelity_report.h"
#include "cli/host_malloc.h"
#include "cli/host_time_source.h"
#include "cli/index_distribution_option.h"
#include "cli/number_checks.h"
#include "cli/original_gap.h"
#include "cli/original_host.h"
#include "cli/output_paths.h"
#include "cli/replay_args.h"
#include "cli/replay_commands.h"
#include "cli/replay_options.h"
#include "cli/stop_request.h"
#include "cli/timeline_replay.h"
#include "core/errors.h"
#include "core/kineto/kineto_reader.h"
#include "core/text_file.h"
#include "core/trace_reader.h"
#include "replay/replayer.h"
#include "replay/result_json.h"
#include "replay/trace_meta.h"

namespace tracetwin::cli {
namespace {

std::string mib(int64_t bytes) { return fmt::format("{:.1f} MiB", double(bytes) / (1 << 20)); }

// "cuda:0" and "cuda" are one kind; a meta file without a device is from a
// CPU capture (capture.py before --device existed).
bool sameDeviceKind(const std::string& recorded, const std::string& replayed) {
  auto kind = [](const std::string& d) { return d.empty() ? "cpu" : d.substr(0, d.find(':')); };
  return kind(recorded) == kind(replayed);
}

void printIssues(const char* title, const std::vector<replay::OpIssue>& issues) {
  if (issues.empty()) return;
  fmt::print("{} ({}):\n", title, issues.size());
  const size_t shown = std::min<size_t>(issues.size(), 20);
  for (size_t i = 0; i < shown; ++i) {
    fmt::print("  op {:>6}  {:<36} {}\n", issues[i].id, issues[i].name, issues[i].reason);
  }
  if (shown < issues.size()) fmt::print("  ... {} more (see --json-out)\n", issues.size() - shown);
}

void printTopOps(const replay::ReplayResult& r) {
  auto ops = r.per_op;
  std::sort(ops.begin(), ops.end(),
            [](const auto& a, const auto& b) { return a.cpu_us > b.cpu_us; });
  fmt::print("slowest ops (median per call):\n");
  for (size_t i = 0; i < std::min<size_t>(ops.size(), 10); ++i) {
    fmt::print("  op {:>6}  {:<36} {:<12} {:>10.1f} us", ops[i].id, ops[i].name, ops[i].family,
               ops[i].cpu_us);
    if (ops[i].kernels)
      fmt::print("  device {:.1f} us ({} kernels)", ops[i].device_us, ops[i].kernels);
    fmt::print("\n");
  }
}

// Iterations whose allocations were placed in new heap pay ~1 us a fault
// (replay/page_faults.h); naming them tells an allocator outlier from an op's.
void printPageFaults(const replay::ReplayResult& r) {
  std::vector<std::string> faulted;
  for (size_t i = 0; i < r.page_faults.size() && i < r.iterations_ms.size(); ++i) {
    if (r.page_faults[i] > 0) {
      faulted.push_back(
          fmt::format("#{} {:.3f} ms, {} faults", i, r.iterations_ms[i], r.page_faults[i]));
    }
  }
  if (faulted.empty()) return;
  fmt::print("page faults in {} of {} measured iterations ({})\n", faulted.size(),
             r.page_faults.size(), fmt::join(faulted, "; "));
}

// One line naming the mode, then what the waits added and where the replay
// was already slower than the original.
void printHostTime(const replay::HostTimeUse& h) {
  if (h.mode == "replayed") {
    fmt::print(
        "host time: replayed (the ops' own calls only; --kineto ORIGINAL --host-time recorded "
        "adds the original's time around them)\n");
    return;
  }
  fmt::print("host time: {}{} from {}\n", h.mode,
             h.scale != 1.0 ? fmt::format(" x{:g}", h.scale) : "", h.source);
  fmt::print(
      "  +{:.3f} ms per iteration before {} ops: the original's {:.3f} ms around them against "
      "the replay's own {:.3f} ms ({} warm-up iterations; busy-wait overshoot {:.3f} us taken "
      "off each wait)\n",
      h.wait_ms, h.ops_with_target, h.target_ms, h.replay_own_ms, h.warmup_samples,
      h.busy_wait_overshoot_us);
  if (h.ops_over > 0) {
    const replay::HostOverrun& o = h.largest_overruns.front();
    fmt::print(
        "  {} replayed calls already took longer than the original's op (+{:.3f} ms in all; "
        "largest op {} {}: {:.1f} us against {:.1f}): no wait for them\n",
        h.ops_over, h.ops_over_ms, o.id, o.name, o.replay_us, o.original_us);
  }
  if (h.absorbed_ms > 0 || h.repaid_ms > 0 || h.behind_ms > 0) {
    fmt::print(
        "  ops whose own gap and call exceed the original's: {:.3f} ms taken off later waits, "
        "{:.3f} ms off earlier ones, {:.3f} ms left at the iteration's end (the replay is that "
        "much over the original)\n",
        h.absorbed_ms, h.repaid_ms, h.behind_ms);
  }
  if (h.ops_without_target > 0) {
    fmt::print("  {} replayed ops have no {} host time: no wait\n", h.ops_without_target,
               h.mode);
  }
  if (h.peer_bound_ops > 0) {
    fmt::print(
        "  {} ops wait for other ranks (collectives, awaits of their results): the original's "
        "{:.3f} ms there are left to the real collectives, not waited for\n",
        h.peer_bound_ops, h.peer_bound_ms);
  }
  for (const std::string& note : h.notes) fmt::print("  note: {}\n", note);
}

void printSummary(const ReplayArgs& args, const replay::ReplayResult& r,
                  const std::optional<replay::TraceMeta>& meta) {
  fmt::print("replay of {} on {} ({} threads)\n", args.trace, r.device, r.threads);
  if (!r.iterations_ms.empty()) {
    auto [lo, hi] = std::minmax_element(r.iterations_ms.begin(), r.iterations_ms.end());
    fmt::print("iteration: median {:.3f} ms over {} iterations (min {:.3f}, max {:.3f})\n",
               r.iteration_ms_median, r.iterations_ms.size(), *lo, *hi);
  }
  if (r.device != "cpu" && r.iteration_ms_median > 0) {
    // Calls return once their kernels are queued: a loop as long as the
    // iteration means the host, not the device, set the pace.
    fmt::print("host: issued an iteration's ops in {:.3f} ms ({:.0f}% of the iteration)\n",
               r.host_loop_ms, 100.0 * r.host_loop_ms / r.iteration_ms_median);
  }
  if (r.device == "cpu" && r.iteration_cpu_ms_median > 0 && r.iteration_ms_median > 0) {
    // On a host with more runnable threads than cores the wall time includes
    // waiting for a core (replay/cpu_time.h).
    fmt::print("cpu time: median {:.3f} ms per iteration ({:.0f}% of the wall time)\n",
               r.iteration_cpu_ms_median, 100.0 * r.iteration_cpu_ms_median / r.iteration_ms_median);
  }
  printPageFaults(r);
  printHostTime(r.host_time);
  if (meta && meta->iteration_ms > 0 && r.iteration_ms_median > 0) {
    if (sameDeviceKind(meta->device, r.device)) {
      fmt::print("original:  {:.3f} ms ({} threads, torch {})  replay/original = {:.3f}\n",
                 meta->iteration_ms, meta->threads, meta->torch_version,
                 r.iteration_ms_median / meta->iteration_ms);
      if (auto gap = originalGapOf(meta->iteration_ms, r))
        fmt::print("note: {}\n", originalGapNote(*gap));
    } else {
      fmt::print("original:  {:.3f} ms on {} (torch {}); not compared with a replay on {}\n",
                 meta->iteration_ms, meta->device, meta->torch_version, r.device);
    }
  }
  fmt::print("ops: {} selected, {} replayed (coverage {:.2f}%), {} skipped, {} failed{}\n",
             r.selected_ops, r.replayed_ops, 100.0 * r.coverage, r.skipped.size(), r.failed.size(),
             r.mismatched.empty() ? ""
                                  : fmt::format(", {} not as recorded", r.mismatched.size()));
  fmt::print("memory: peak {} live replay tensors vs {} implied by the trace",
             mib(r.peak_memory_bytes), mib(r.trace_peak_bytes));
  if (r.trace_peak_bytes > 0) {
    fmt::print(" (ratio {:.2f})", double(r.peak_memory_bytes) / double(r.trace_peak_bytes));
  }
  fmt::print("\n");
  if (const replay::DeviceSummary& d = r.device_summary; d.collected) {
    fmt::print(
        "device (CUPTI): busy {:.3f} ms = {:.1f}% of the iteration; {} records ({:.2f} per "
        "replayed op), {:.1f}% of busy time attributed to ops, {} unattributed, {} dropped\n",
        d.busy_ms, 100.0 * d.busy_share, d.records, d.kernels_per_op, 100.0 * d.attributed_share,
        d.unattributed_records, d.dropped_records);
  }
  if (r.zipf_lookups > 0) {
    fmt::print("indices:      {} embedding lookup(s) drawn Zipf (--index-distribution {})\n",
               r.zipf_lookups, args.index_distribution);
  }
  if (!r.substitutions.empty()) {
    fmt::print("substitutions: {} (e.g. op {}: {} -> {})\n", r.substitutions.size(),
               r.substitutions.front().id, r.substitutions.front().from,
               r.substitutions.front().to);
  }
  for (const auto& m : r.overload_mappings) fmt::print("overload mapped: {}\n", m);
  if (!r.streams.recorded.empty()) {
    fmt::print("streams: recorded {} -> {} replay streams, {} cross-stream waits{}\n",
               fmt::join(r.streams.recorded, ", "),
               r.streams.applied ? r.streams.recorded.size() : size_t{1},
               r.streams.cross_stream_waits,
               r.streams.applied ? "" : fmt::format(" (not applied: {})", r.streams.note));
  }
  printIssues("skipped", r.skipped);
  if (!r.placeholders.empty()) {
    double host = 0, device = 0;
    for (const auto& p : r.placeholders) {
      host += p.recorded_us;
      device += p.device_us;
    }
    fmt::print(
        "placeholders: {} skipped op(s) stood in for, {:.1f} us of host time and {:.1f} us of "
        "device time per iteration (e.g. op {} {}: {:.1f} us host, {:.1f} us device, {})\n",
        r.placeholders.size(), host, device, r.placeholders.front().id,
        r.placeholders.front().name, r.placeholders.front().recorded_us,
        r.placeholders.front().device_us, r.placeholders.front().source);
  }
  printIssues("failed", r.failed);
  printIssues("mismatched (ran, but not as recorded)", r.mismatched);
  if (!r.per_op.empty()) printTopOps(r);
  if (r.interrupted) fmt::print("interrupted: the report covers the iterations completed so far\n");
}

// --host-time recorded | model: each op's target, from the linked Kineto
// trace or from the prediction.
std::optional<HostTimeTargets> hostTimeTargets(
    const ReplayArgs& args, const core::Graph& graph, const std::string& kineto,
    const std::optional<core::kineto::KinetoTrace>& trace,
    const std::optional<core::kineto::LinkedTimeline>& original,
    const std::optional<replay::TraceMeta>& meta) {
  const std::string& mode = args.options.host_time_mode;
  // Checked for every mode: with recorded it was ignored, even a file of another kind.
  if (!args.overheads.empty() && mode != "model") {
    throw UsageError("--overheads applies with --host-time model");
  }
  if (mode == "recorded") {
    if (!original) {
      throw UsageError(
          "--host-time recorded takes the original's host time from its Kineto trace: give "
          "--kineto ORIGINAL (or --host-time model --models DIR for the model's)");
    }
    const double unprofiled_ms = meta ? meta->iteration_ms : 0.0;
    return recordedHostTargets(*original, *trace, unprofiled_ms, kineto);
  }
  if (mode == "model") {
    if (args.models.empty()) {
      throw UsageError(
          "--host-time model takes each op's host time from a prediction: give --models DIR "
          "(tracetwin calibrate; data/models/host on the build host)");
    }
    return modelHostTargets(graph, args.models, args.overheads, args.options.device);
  }
  return std::nullopt;
}

}  // namespace

ReplayRun replayAndReport(const ReplayArgs& args, const std::string& trace,
                          const std::string& kineto,
                          std::shared_ptr<replay::dist::RankSession> session, bool print,
                          const std::function<void(const std::string&)>& on_read_failure) {
  ReplayRun run;
  run.host_malloc = applyHostMalloc(args.malloc_mode);
  core::Graph graph;
  try {
    graph = core::readTrace(trace);
  } catch (const Error& e) {
    if (on_read_failure) on_read_failure(e.what());
    throw;
  }
  const auto meta = replay::readTraceMeta(trace);
  std::optional<core::kineto::KinetoTrace> kineto_trace;
  std::optional<core::kineto::LinkedTimeline> original;
  if (!kineto.empty()) {
    kineto_trace = core::kineto::readKinetoTrace(kineto);
    original = core::kineto::linkTraces(graph, *kineto_trace);
    if (const std::string weak = core::kineto::weakLinkWarning(*original); !weak.empty())
      fmt::print(stderr, "{}\n", weak);
  }
  replay::ReplayOptions options = args.options;
  const IndexDistributionUse distributions =
      indexDistributionsFor(args.index_distribution, graph);
  options.index_zipf = distributions.index_zipf;
  if (print) {
    for (const std::string& w : graph.warnings) fmt::print("warning: {}: {}\n", trace, w);
    for (const std::string& note : distributions.notes) fmt::print("note: {}\n", note);
  }
  std::optional<HostTimeTargets> host =
      hostTimeTargets(args, graph, kineto, kineto_trace, original, meta);
  if (host) options.host_targets = host->by_op;
  options.rank_session = std::move(session);
  std::optional<UnrecordedKernels> unrecorded;
  if (original) {
    // Ops the replay cannot run keep their recorded time (DESIGN.md, Replay).
    for (const auto& op : original->ops) {
      if (op.matched && op.duration_us > 0) options.placeholder_us[op.id] = op.duration_us;
      // The stream the op's first kernel ran on (replay/stream_plan.h).
      if (args.streams == "recorded" && !op.kernels.empty() && op.kernels.front().stream >= 0)
        options.recorded_streams[op.id] = op.kernels.front().stream;
    }
    addRecordedKernelTimes(graph, *original, &options);  // compiled kernels, mode 2
    unrecorded = unrecordedCompiledKernels(graph, *original);
  }
  if (!args.models.empty()) addPredictedKernelTimes(graph, args.models, &options);  // mode 3
  options.should_stop = [] { return StopOnSignal::requested() != 0; };
  replay::ReplayResult& result = run.result;
  {
    const StopOnSignal stop_on_ctrl_c;  // the partial report is still written
    result = replay::replayGraph(graph, options);
  }
  if (host) {
    result.host_time.source = host->source;
    result.host_time.notes = host->notes;
  }
  ReplayArgs shown = args;
  shown.trace = trace;
  if (print) printSummary(shown, result, meta);
  if (print) printCompiledReplay(result, unrecorded ? &*unrecorded : nullptr, stdout);
  const std::vector<std::string> host_differences =
      meta && meta->iteration_ms > 0 ? originalHostDifferences(*meta, result.device)
                                     : std::vector<std::string>{};
  if (print) printOriginalHostWarning(host_differences);

  nlohmann::json& doc = run.doc;
  doc = replay::replayResultToJson(result);
  doc["trace"] = trace;
  doc["host_malloc"] = run.host_malloc;
  if (doc.contains("compiled") || (unrecorded && unrecorded->kernels > 0))
    doc["compiled"] = compiledReplayReport(result, unrecorded ? &*unrecorded : nullptr);
  if (meta && meta->iteration_ms > 0) {
    doc["original_iteration_ms"] = meta->iteration_ms;
    doc["ratio"] =
        result.iteration_ms_median > 0 ? result.iteration_ms_median / meta->iteration_ms : 0.0;
    doc["original_host_differences"] = host_differences;
    if (meta->job_step_ms > 0) doc["original_job_step_ms"] = meta->job_step_ms;
    if (sameDeviceKind(meta->device, result.device)) {
      if (auto gap = originalGapOf(meta->iteration_ms, result))
        doc["original_gap"] = originalGapJson(*gap);
    }
  }
  run.extra_events = nlohmann::json::array();
  if (original) {
    FidelityReport report = buildFidelityReport(
        *original, result, host && host->recorded ? &*host->recorded : nullptr);
    if (print) printFidelityReport(report, stdout);
    doc["fidelity"] = fidelityReportJson(report);
    run.extra_events = originalTimelineTraceEvents(*original, /*pid=*/2);
    if (!args.timeline.empty()) {
      const int rank = options.rank_session ? options.rank_session->rank() : -1;
      run.original = timeline::originalView(graph, *original, kineto, rank);
    }
  }
  return run;
}

void writeJsonReport(const std::string& path, const nlohmann::json& doc) {
  core::writeTextFile(path, doc.dump(2) + "\n");
  fmt::print("json report: {}\n", path);
}

namespace {

void runSingleReplay(const ReplayArgs& args) {
  if (replay::dist::hasRankPlaceholder(args.trace)) {
    throw UsageError(fmt::format(
        "{}: '{{rank}}' in the trace path needs one process per rank: --nproc N, or a launch by "
        "torchrun, srun or mpirun",
        args.trace));
  }
  const ReplayRun run = replayAndReport(args, args.trace, args.kineto, nullptr, true);
  if (!args.chrome_trace.empty()) {
    replay::writeChromeTrace(args.chrome_trace, run.result, run.extra_events);
    fmt::print("chrome trace: {}\n", args.chrome_trace);
  }
  if (!args.timeline.empty()) {
    timeline::Timeline t;
    if (run.original) t.views.push_back(*run.original);
    t.views.push_back(replayView(run.result));
    writeTimelineFile(args.timeline, t);
  }
  if (!args.json_out.empty()) writeJsonReport(args.json_out, run.doc);
  if (run.result.interrupted) {
    throw InterruptedError(fmt::format("{}: replay stopped after {} measured iteration(s)",
                                       args.trace, run.result.iterations_ms.size()));
  }
}

void runReplay(const ReplayArgs& args) {
  requireDistinctOutputs({{"--json-out", &args.json_out},
                          {"--chrome-trace", &args.chrome_trace},
                          {"--timeline", &args.timeline}});
  const replay::dist::RankEnv env = replay::dist::detectRankEnv();
  if (env.launched()) return runReplayRank(args, env);
  if (!args.rank_reports.empty() && args.nproc == 0) {
    throw UsageError(
        "--rank-reports writes each rank's report of a distributed replay: it needs "
        "--nproc N");
  }
  if (args.nproc > 0) return launchReplayRanks(args);
  runSingleReplay(args);
}

std::function<void()> setupReplay(CLI::App& sub) {
  auto args = std::make_shared<ReplayArgs>();
  sub.add_option("trace", args->trace, "execution trace (.json or .json.gz)")->required();
  addReplayLoopOptions(sub, args->options);
  sub.add_flag("--strict", args->options.strict, "any skipped or failed op is an error (exit 4)");
  CLI::Option* no_cupti = sub.add_flag("--no-cupti{false}", args->options.use_cupti,
                                       "CUDA: time iterations only, no kernel records");
  sub.add_option("--seed", args->options.seed, "seed for random tensor data")
      ->capture_default_str()
      ->check(wholeNumberFor<int64_t>(0));  // unsigned: -1 and 2^64 wrapped silently
  sub.add_option("--json-out", args->json_out, "write the report as JSON")->check(outputFile());
  addHostMallocOption(sub, args->malloc_mode);
  sub.add_option("--chrome-trace", args->chrome_trace,
                 "write one replayed iteration as a Chrome trace")
      ->check(outputFile());
  sub.add_option("--timeline", args->timeline,
                 "write one Chrome/Perfetto timeline (.json or .json.gz) of the replayed "
                 "iteration beside the original's (with --kineto), each rank its own group "
                 "(docs/timeline.md)")
      ->check(outputFile());
  sub.add_option("--kineto", args->kineto,
                 "Kineto trace of the original run: fidelity per op family, recorded streams, "
                 "placeholders for ops that cannot run");
  sub.add_option("--rank-reports", args->rank_reports,
                 "with --nproc: also write each rank's own report (per op, its collectives) as "
                 "DIR/rank{r}.json")
      ->check(outputDirectory());
  sub.add_option("--host-time", args->options.host_time_mode,
                 "host time around the ops: replayed (the calls only), recorded (the original's, "
                 "from --kineto, less the profiler's cost) or model (--models' prediction), "
                 "reproduced by busy waits before each call")
      ->capture_default_str()
      ->check(CLI::IsMember(replay::hostTimeModes()));
  sub.add_option("--host-scale", args->options.host_scale,
                 "with --host-time recorded or model: the original's host time times this (0.5: "
                 "a host twice as fast)")
      ->check(numberAbove(0, kMaxHostScale));
  sub.add_option("--overheads", args->overheads,
                 "--host-time model: T1-T5 CPU overheads (tracetwin link --overheads-out of the "
                 "original) instead of the model set's")
      ->check(CLI::ExistingFile);
  sub.add_option("--inductor-cache", args->options.inductor_cache,
                 "torch.compile steps: Inductor's cache directory of the original run "
                 "(TORCHINDUCTOR_CACHE_DIR; scripts/capture.py --compile keeps it): its Triton "
                 "kernels are launched from C++ (mode 1)")
      ->check(CLI::ExistingDirectory);
  sub.add_option("--models", args->models,
                 "model set (tracetwin calibrate / fit): with --host-time model its prediction "
                 "gives each op's host time; for torch.compile steps its predicted times stand "
                 "in for Triton kernels neither the cache nor --kineto covers (mode 3, reported "
                 "as predicted)");
  CLI::Option* streams =
      sub.add_option(
             "--streams", args->streams,
             "with --kineto on CUDA: run ops on the streams their kernels ran on (recorded) "
             "or all on one")
          ->capture_default_str()
          ->check(CLI::IsMember({"recorded", "one"}));
  sub.add_option("--nproc", args->nproc,
                 "distributed replay: start N rank processes on this host (Gloo on cpu, NCCL on "
                 "cuda, one GPU per rank); '{rank}' in TRACE and --kineto is each rank's number, "
                 "and a TRACE without it replays the same trace on every rank")
      ->check(wholeNumber(1, 1024));  // processes on one host
  addIndexDistributionOption(sub, args->index_distribution);
  sub.add_option("--comm-timeout-s", args->comm_timeout_s,
                 "distributed replay: how long a rank waits for its peers before it fails (exit "
                 "4) naming the ranks that did not come")
      ->capture_default_str()
      ->check(numberAbove(0));
  return [args, streams, no_cupti] {
    if (no_cupti->count() > 0 && args->options.device.rfind("cuda", 0) != 0) {
      throw UsageError(fmt::format(
          "--no-cupti applies to a CUDA replay (--device cuda): a {} replay records no kernels",
          args->options.device));
    }
    // The streams come from the profiler trace's kernels: without it the
    // option changed nothing, silently (a bad-input hunt).
    if (streams->count() > 0 && args->kineto.empty()) {
      throw UsageError(
          "--streams picks each op's stream from its kernels in the --kineto trace; "
          "without --kineto every op runs on one stream");
    }
    runReplay(*args);
  };
}

}  // namespace

TRACETWIN_REGISTER_COMMAND(replay, kReplayDescription, setupReplay);

}  // namespace tracetwin::cli
