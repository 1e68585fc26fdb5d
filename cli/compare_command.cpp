// `tracetwin compare TRACE --models DIR [--warmup N --iters N --threads N
//  --device D] [--json-out FILE]`: replays the trace and predicts it with a
// calibrated ModelSet, then prints both side by side per op family and in
// total, with signed errors (predicted - measured) / measured.
#include <fmt/core.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "calibration/host_match.h"
#include "calibration/host_probe.h"
#include "calibration/host_speed.h"
#include "cli/command_registry.h"
#include "cli/compare_ranks.h"
#include "cli/core_gate.h"
#include "cli/host_cores_option.h"
#include "cli/host_malloc.h"
#include "cli/index_distribution_option.h"
#include "cli/number_checks.h"
#include "cli/original_host.h"
#include "cli/output_paths.h"
#include "cli/recorded_kineto.h"
#include "cli/replay_commands.h"
#include "cli/replay_options.h"
#include "cli/timeline_replay.h"
#include "core/errors.h"
#include "core/kineto/kineto_reader.h"
#include "core/kineto/linker.h"
#include "core/statistics.h"
#include "core/text_file.h"
#include "core/trace_reader.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/predictor.h"
#include "replay/replayer.h"
#include "replay/trace_meta.h"
#include "replay/untraced_timing.h"

namespace tracetwin::cli {
namespace {

struct CompareArgs {
  std::string trace;
  std::string models;
  replay::ReplayOptions options;
  std::string json_out;
  HostMalloc malloc_mode = HostMalloc::kPinned;
  bool host_speed_check = true;
  double host_cores = 0;  // with --nproc: the prediction's shared cores
  int nproc = 0;  // > 0: the distributed replay and the joint prediction (compare_ranks.h)
  double comm_timeout_s = 300;
  std::string timeline;  // --timeline FILE
  std::string kineto;    // the original's Kineto trace, for the timeline
  std::string index_distribution;  // --index-distribution
  double core_tolerance = 0;       // --core-tolerance: the replay on steady cores
};

struct FamilyRow {
  int64_t count = 0;
  double measured_ms = 0;
  double predicted_ms = 0;
};

// How far the measured iterations spread: p10 and p90, and their distance
// as a share of the median. On a shared host one replay's iterations have
// spread over 5.6-8.4 ms (transformer, 2026-11-25), and the same
// prediction's error moved from -17% in that round to +7% in the next: an
// error inside the spread says little about the models.
struct Spread {
  double p10_ms = 0, p90_ms = 0, pct = 0;
};
constexpr double kNoisySpreadPct = 10;

Spread spreadOf(const std::vector<double>& iterations_ms, double median_ms) {
  Spread s;
  s.p10_ms = core::quantile(iterations_ms, 0.1);
  s.p90_ms = core::quantile(iterations_ms, 0.9);
  s.pct = median_ms > 0 ? 100.0 * (s.p90_ms - s.p10_ms) / median_ms : 0.0;
  return s;
}

predictors::ModelSet loadModels(const std::string& dir) {
  if (!std::filesystem::is_directory(dir)) {
    throw InputError(
        fmt::format("{}: models directory not found (expected {} from `tracetwin "
                    "calibrate --out {}`)",
                    dir, predictors::ModelSet::kManifestName, dir));
  }
  return predictors::ModelSet::load(dir);
}

// Measured per family: the replayed ops' own times (device time on a GPU);
// predicted: the models' op times. The iteration totals also hold the
// per-op loop cost, which belongs to no family.
std::map<std::string, FamilyRow> familyRows(const replay::ReplayResult& r,
                                            const predictors::Prediction& p, bool on_gpu) {
  std::map<std::string, FamilyRow> rows;
  for (const auto& m : r.per_op) {
    FamilyRow& row = rows[m.family];
    ++row.count;
    row.measured_ms += (on_gpu ? m.device_us : m.cpu_us) / 1000.0;
  }
  for (const auto& o : p.per_op) rows[o.family].predicted_ms += o.predicted_us / 1000.0;
  return rows;
}

// The CPU side of a device replay: the host loop that issued an iteration
// against the CPU time the prediction charges its ops (T1-T5). Apart from
// the iteration, this judges the host-cost model alone: the replay issues
// every op from one thread, as the simulation serialises threads.
double predictedHostMs(const predictors::Prediction& p) {
  double us = 0;
  for (const auto& o : p.per_op) us += o.cpu_us;
  return us / 1000.0;
}

void printTable(const CompareArgs& a, const replay::ReplayResult& r,
                const predictors::Prediction& p, const std::map<std::string, FamilyRow>& rows) {
  fmt::print("compare {} on {} ({} threads) with models {}\n", a.trace, r.device, r.threads,
             a.models);
  fmt::print("{:<14} {:>6} {:>13} {:>14} {:>9}\n", "family", "ops", "measured ms", "predicted ms",
             "error");
  double fam_measured = 0, fam_predicted = 0;
  for (const auto& [family, row] : rows) {
    fam_measured += row.measured_ms;
    fam_predicted += row.predicted_ms;
    fmt::print("{:<14} {:>6} {:>13.3f} {:>14.3f} {:>8.1f}%\n", family, row.count, row.measured_ms,
               row.predicted_ms, errorPct(row.predicted_ms, row.measured_ms));
  }
  const double between_measured = r.iteration_ms_median - fam_measured;
  fmt::print("{:<14} {:>6} {:>13.3f} {:>14.3f}\n", "(between ops)", "", between_measured,
             p.iteration_ms - fam_predicted);
  fmt::print("{:<14} {:>6} {:>13.3f} {:>14.3f} {:>8.1f}%\n", "iteration", r.replayed_ops,
             r.iteration_ms_median, p.iteration_ms,
             errorPct(p.iteration_ms, r.iteration_ms_median));
  if (r.iterations_ms.size() >= 3) {
    const Spread s = spreadOf(r.iterations_ms, r.iteration_ms_median);
    fmt::print("note: measured iterations p10 {:.3f} ms, p90 {:.3f} ms ({:.1f}% of the median)\n",
               s.p10_ms, s.p90_ms, s.pct);
    if (s.pct > kNoisySpreadPct) {
      fmt::print(
          "warning: the replayed iterations spread over {:.1f}% of their median: the host was "
          "disturbed while measuring, and an error within that spread says little about the "
          "models; run again, or with more --iters\n",
          s.pct);
    }
  }
  if (r.device != "cpu" && r.host_loop_ms > 0) {
    const double predicted_host = predictedHostMs(p);
    fmt::print(
        "note: host issue time per iteration (ops' calls and the loop around them): measured "
        "{:.3f} ms, predicted {:.3f} ms ({:+.1f}%)\n",
        r.host_loop_ms, predicted_host, errorPct(predicted_host, r.host_loop_ms));
  } else if (r.outside_ops_ms > 0) {
    // What the measured row holds: time outside the ops' calls, and the
    // difference between the iteration median and the sum of op medians.
    fmt::print(
        "note: (between ops) measured = {:.3f} ms outside the ops' calls (median per iteration) "
        "+ {:.3f} ms by which the median iteration exceeds the sum of the ops' medians (whole "
        "iterations running slower or faster together)\n",
        r.outside_ops_ms, between_measured - r.outside_ops_ms);
  }
  if (r.coverage < 1.0) {
    fmt::print(
        "note: replay coverage {:.1f}% ({} of {} ops); the failed or skipped ops are left out "
        "of the prediction too\n",
        100.0 * r.coverage, r.replayed_ops, r.selected_ops);
  }
  if (!p.unmodelled_ops.empty()) {
    fmt::print("note: {} ops had no calibrated model (device-spec fallback), e.g. {} ({})\n",
               p.unmodelled_ops.size(), p.unmodelled_ops.front().name,
               p.unmodelled_ops.front().family);
  }
  for (const std::string& n : p.notes) fmt::print("note: {}\n", n);
}

nlohmann::json compareJson(const CompareArgs& a, const replay::UntracedTiming& timing,
                           const predictors::Prediction& p,
                           const std::map<std::string, FamilyRow>& rows) {
  const replay::ReplayResult& r = timing.result;
  nlohmann::json fam = nlohmann::json::object();
  for (const auto& [family, row] : rows) {
    fam[family] = {{"count", row.count},
                   {"measured_ms", row.measured_ms},
                   {"predicted_ms", row.predicted_ms},
                   {"error_pct", errorPct(row.predicted_ms, row.measured_ms)}};
  }
  // Per op, for digging into a family's error: measured beside predicted.
  std::map<core::NodeId, const predictors::OpPrediction*> predicted;
  for (const auto& o : p.per_op) predicted[o.id] = &o;
  nlohmann::json per_op = nlohmann::json::array();
  const bool on_gpu = a.options.device != "cpu";
  for (const auto& m : r.per_op) {
    auto it = predicted.find(m.id);
    nlohmann::json op = {{"id", m.id},
                         {"name", m.name},
                         {"family", m.family},
                         {"measured_us", on_gpu ? m.device_us : m.cpu_us},
                         {"predicted_us", it != predicted.end() ? it->second->predicted_us : 0.0}};
    // The step terms' shares of predicted_us, as `predict --json-out`
    // reports them.
    if (it != predicted.end()) predictors::addStepTerms(*it->second, &op);
    // On a device, the host side per op: the call as the untraced replay
    // measured it (the collector's cost left out) against the host cost
    // model's T1-T5.
    if (on_gpu) {
      const auto untraced = timing.untraced_cpu_us.find(m.id);
      op["measured_host_us"] =
          untraced != timing.untraced_cpu_us.end() ? untraced->second : m.cpu_us;
      op["predicted_host_us"] = it != predicted.end() ? it->second->cpu_us : 0.0;
      // What the host is charged per launch for (launch_counts.h): the
      // kernels, memcpys and memsets CUPTI saw against those predicted.
      op["measured_kernels"] = m.kernels;
      if (it != predicted.end() && it->second->kernels >= 0)
        op["predicted_kernels"] = it->second->kernels;
    }
    per_op.push_back(std::move(op));
  }
  nlohmann::json doc = {
      {"trace", a.trace},
      {"models", a.models},
      {"device", r.device},
      {"threads", r.threads},
      {"measured_ms", r.iteration_ms_median},
      {"measured_iterations_ms", r.iterations_ms},
      {"measured_outside_ops_ms", r.outside_ops_ms},
      {"measured_spread_pct", spreadOf(r.iterations_ms, r.iteration_ms_median).pct},
      {"predicted_ms", p.iteration_ms},
      {"error_pct", errorPct(p.iteration_ms, r.iteration_ms_median)},
      {"coverage", r.coverage},
      {"unmodelled_ops", p.unmodelled_ops.size()},
      {"notes", p.notes},
      {"families", fam},
      {"per_op", per_op}};
  doc["uncalibrated_ops"] = predictors::uncalibratedOpsJson(p);
  if (on_gpu) {
    doc["measured_host_ms"] = r.host_loop_ms;
    doc["predicted_host_ms"] = predictedHostMs(p);
  }
  if (auto meta = replay::readTraceMeta(a.trace); meta && meta->iteration_ms > 0) {
    doc["original_iteration_ms"] = meta->iteration_ms;
    doc["original_device"] = meta->device.empty() ? "cpu" : meta->device;
    doc["original_host_differences"] = originalHostDifferences(*meta, r.device);
  }
  return doc;
}

// The ops the replay did not time (skipped or failed, with no stand-in) are
// left out of the prediction too: both sides then time the same graph. A
// GPU trace replayed on a CPU host skips its cuDNN-only ops (lstm's
// _cudnn_rnn_backward), which would otherwise count on one side only.
predictors::PredictOptions unreplayedLeftOut(const replay::ReplayResult& r) {
  predictors::PredictOptions opts;
  for (const auto* issues : {&r.skipped, &r.failed})
    for (const replay::OpIssue& op : *issues) opts.excluded.insert(op.id);
  for (const replay::Placeholder& p : r.placeholders) opts.excluded.erase(p.id);
  return opts;
}

// The original (from --kineto, else the profiler trace the capture wrote
// beside the ET), the replay and the prediction, with each op's error.
void writeCompareTimeline(const CompareArgs& a, const core::Graph& graph,
                          const replay::ReplayResult& result,
                          const predictors::Prediction& prediction) {
  timeline::Timeline t;
  const std::string kineto = a.kineto.empty() ? recordedKinetoBeside(a.trace) : a.kineto;
  if (!kineto.empty()) {
    if (a.kineto.empty())
      fmt::print("timeline: the original from {} (recorded beside the trace)\n", kineto);
    t.views.push_back(timeline::originalView(
        graph, core::kineto::linkTraces(graph, core::kineto::readKinetoTrace(kineto)), kineto));
  }
  t.views.push_back(replayView(result));
  const auto measured = measuredOf(result);
  t.views.push_back(timeline::predictionView(prediction, &measured));
  writeTimelineFile(a.timeline, t);
}

void runCompare(const CompareArgs& a) {
  requireDistinctOutputs({{"--json-out", &a.json_out}, {"--timeline", &a.timeline}});
  if (!a.kineto.empty() && a.timeline.empty()) {
    // Read for the timeline's original only; it ran and was ignored.
    throw UsageError(fmt::format(
        "--kineto {} is read for --timeline only: add --timeline FILE, or drop --kineto",
        a.kineto));
  }
  if (a.nproc == 0 && a.host_cores != 0) {
    throw UsageError(
        "--host-cores applies with --nproc N (the ranks' shared cores); one rank is "
        "predicted with a host of its own");
  }
  if (a.core_tolerance > 0 && a.options.device != "cpu") {
    // The gauge reads the host's cores; a GPU's step has its own clock.
    throw UsageError(fmt::format(
        "--core-tolerance gates a CPU replay on this host's cores; a {} replay's step is the "
        "device's",
        a.options.device));
  }
  if (a.nproc > 0) {
    CompareRanksArgs r;
    r.trace = a.trace;
    r.models = a.models;
    r.nproc = a.nproc;
    r.device = a.options.device;
    r.warmup = a.options.warmup_iters;
    r.iters = a.options.measured_iters;
    r.settle = a.options.settle_iters;
    r.comm_timeout_s = a.comm_timeout_s;
    r.threads = a.options.threads;
    r.host_cores = a.host_cores;
    r.op_libraries = a.options.op_libraries;
    r.json_out = a.json_out;
    r.timeline = a.timeline;
    r.index_distribution = a.index_distribution;
    r.host_speed_check = a.host_speed_check;
    r.core_tolerance = a.core_tolerance;
    compareRanks(r);
    return;
  }
  const std::string host_malloc = applyHostMalloc(a.malloc_mode);
  const predictors::ModelSet models = loadModels(a.models);
  const core::Graph graph = core::readTrace(a.trace);
  const bool on_gpu = a.options.device != "cpu";
  // The host's speed around the replay against the models' calibration
  // (host_speed.h): CPU models on a CPU replay only.
  std::optional<calibration::HostSpeed> host_speed;
  if (a.host_speed_check && !on_gpu) host_speed = calibration::hostSpeedBefore(models.device);
  // Kernel times come from a replay with CUPTI, the step's time from one
  // without it (untraced_timing.h).
  const IndexDistributionUse distributions = indexDistributionsFor(a.index_distribution, graph);
  for (const std::string& note : distributions.notes) fmt::print("note: {}\n", note);
  replay::ReplayOptions replay_options = a.options;
  replay_options.index_zipf = distributions.index_zipf;
  std::vector<replay::UntracedTiming> timings;  // with --core-tolerance, one per attempt
  std::optional<CoreGateRun> gate;
  if (a.core_tolerance > 0) {
    gate = runOnSteadyCoresHere(a.core_tolerance, [&] {
      timings.push_back(replay::replayWithUntracedTiming(graph, replay_options));
      return timings.back().result.iteration_ms_median;
    });
  } else {
    timings.push_back(replay::replayWithUntracedTiming(graph, replay_options));
  }
  const replay::UntracedTiming& timing = timings[gate ? size_t(gate->kept.kept_run) : 0];
  const replay::ReplayResult& result = timing.result;
  if (host_speed) calibration::finishHostSpeed(&*host_speed);
  predictors::PredictOptions predict_options = unreplayedLeftOut(result);
  predict_options.keep_schedule = !a.timeline.empty();
  predict_options.index_reuse = distributions.index_reuse;
  const predictors::Prediction prediction =
      predictors::predictGraph(graph, models, predict_options);
  const auto rows = familyRows(result, prediction, on_gpu);
  printTable(a, result, prediction, rows);
  if (timing.retimed) {
    fmt::print(
        "note: iterations timed in a second replay without the kernel collector (with it: {:.3f} "
        "ms per iteration, host loop {:.3f} ms)\n",
        timing.collector_iteration_ms, timing.collector_host_loop_ms);
  }
  if (host_speed) fmt::print("{}\n", calibration::hostSpeedLine(*host_speed));
  if (gate) fmt::print("{}\n", coreGateLine(*gate));
  // CPU models measured on another CPU predict that CPU (host_match.h).
  const std::vector<std::string> host_differences =
      on_gpu ? std::vector<std::string>{}
             : calibration::hostDifferences(models.device, calibration::readHostFacts());
  if (!host_differences.empty()) {
    fmt::print(
        "warning: the models were calibrated on another host ({}): the predicted times are that "
        "host's; `tracetwin calibrate --out DIR` measures this one\n",
        fmt::join(host_differences, "; "));
  }
  if (!a.timeline.empty()) writeCompareTimeline(a, graph, result, prediction);
  if (!a.json_out.empty()) {
    nlohmann::json doc = compareJson(a, timing, prediction, rows);
    doc["host_malloc"] = host_malloc;
    doc["models_host_differences"] = host_differences;
    if (host_speed) doc["host_speed"] = calibration::hostSpeedToJson(*host_speed);
    if (gate) doc["core_gate"] = coreGateJson(*gate);
    if (timing.retimed) {
      doc["measured_ms_with_collector"] = timing.collector_iteration_ms;
      doc["measured_host_ms_with_collector"] = timing.collector_host_loop_ms;
    }
    core::writeTextFile(a.json_out, doc.dump(2) + "\n");  // write errors, inputs refused
    fmt::print("json report: {}\n", a.json_out);
  }
}

std::function<void()> setupCompare(CLI::App& sub) {
  auto args = std::make_shared<CompareArgs>();
  sub.add_option("trace", args->trace, "execution trace (.json or .json.gz)")->required();
  sub.add_option("--models", args->models, "ModelSet directory written by `tracetwin calibrate`")
      ->required();
  addReplayLoopOptions(sub, args->options);  // of the replay
  sub.add_option("--json-out", args->json_out,
                 "write measured_ms, predicted_ms, error_pct and per-family rows as JSON")
      ->check(outputFile());
  sub.add_flag("!--no-host-speed", args->host_speed_check,
               "skip the float32 mm probe before and after a CPU replay that compares the host's "
               "speed with the models' calibration (~0.2 s each)");
  sub.add_option("--nproc", args->nproc,
                 "a job of N ranks: the distributed replay (N processes here; Gloo on cpu, NCCL "
                 "on cuda) beside the joint prediction, per rank and family, comm transfer and "
                 "wait as rows; '{rank}' in TRACE is each rank's trace, a TRACE without it runs "
                 "on every rank")
      ->check(wholeNumber(1, 1024));
  addIndexDistributionOption(sub, args->index_distribution);
  addHostCoresOption(sub, args->host_cores,
                     "with --nproc on cpu: the ranks share this many cores in the prediction "
                     "(default: the device spec's; -1: a host each)");
  sub.add_option("--comm-timeout-s", args->comm_timeout_s,
                 "with --nproc: how long a collective, the store or a group may wait")
      ->capture_default_str()
      ->check(numberAbove(0));
  addHostMallocOption(sub, args->malloc_mode);
  sub.add_option("--core-tolerance", args->core_tolerance,
                 "on a CPU: replay while every core reads within F (e.g. 1.25) of the host's fast "
                 "phase, again (at most twice) when one slowed during it; the models were "
                 "calibrated in that phase (docs/prediction.md, \"compare --nproc\"; default off)")
      ->check(CLI::Range(1.05, 100.0));
  sub.add_option("--timeline", args->timeline,
                 "write one Chrome/Perfetto timeline (.json or .json.gz): the original, the "
                 "replay and the prediction of the iteration side by side (docs/timeline.md)")
      ->check(outputFile());
  sub.add_option("--kineto", args->kineto,
                 "Kineto trace of the original run, for --timeline (default: the one the capture "
                 "recorded beside the trace, if any)");
  return [args] { runCompare(*args); };
}

}  // namespace

TRACETWIN_REGISTER_COMMAND(compare, kCompareDescription, setupCompare);

}  // namespace tracetwin::cli
