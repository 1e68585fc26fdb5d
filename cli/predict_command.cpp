// `tracetwin predict TRACE --models DIR [--device-spec FILE] [--overheads FILE]
// [--kernel-times KINETO] [--world-size N] [--json-out FILE]`: the predicted
// iteration time of one iteration of TRACE, per-family totals, the breakdown
// and the ops no calibrated model covers. A TRACE with `{rank}` is every
// rank of a job, simulated together (cli/predict_ranks.cpp); a TRACE without
// it and --world-size N > 1 is one rank standing for N identical ones.
// Needs neither LibTorch nor a GPU.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "cli/command_registry.h"
#include "cli/host_cores_option.h"
#include "cli/index_distribution_option.h"
#include "cli/keep_until_exit.h"
#include "cli/number_checks.h"
#include "cli/output_paths.h"
#include "cli/predict_ranks.h"
#include "cli/timeline_file.h"
#include "core/errors.h"
#include "core/input_files.h"
#include "core/kineto/kineto_reader.h"
#include "core/kineto/linker.h"
#include "core/text_file.h"
#include "core/trace_reader.h"
#include "predictors/comm/comm_model.h"
#include "predictors/host/overheads.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/joint_prediction.h"
#include "predictors/simulation/predictor.h"
#include "predictors/specs/device_spec.h"
#include "predictors/specs/system_spec.h"
#include "replay/dist/rank_env.h"
#include "timeline/sources.h"

namespace tracetwin::cli {
namespace {

struct FamilyTotal {
  int64_t ops = 0;
  double device_us = 0;
  double cpu_us = 0;
};

void printReport(const predictors::Prediction& p, const PredictArgs& args) {
  fmt::print("trace:      {}\n", args.trace);
  fmt::print("device:     {}\n", p.device);
  fmt::print("iteration:  {:.3f} ms predicted ({} ops)\n\n", p.iteration_ms, p.per_op.size());
  printPredictionDetail(p);
}

}  // namespace

void printPredictionDetail(const predictors::Prediction& p) {
  std::map<std::string, FamilyTotal> totals;
  for (const auto& o : p.per_op) {
    FamilyTotal& t = totals[o.family];
    ++t.ops;
    t.device_us += o.predicted_us;
    t.cpu_us += o.cpu_us;
  }
  fmt::print("{:<14} {:>6} {:>12} {:>12}\n", "family", "ops", "device ms", "cpu ms");
  for (const auto& [family, t] : totals) {
    fmt::print("{:<14} {:>6} {:>12.3f} {:>12.3f}\n", family, t.ops, t.device_us / 1000,
               t.cpu_us / 1000);
  }
  const auto& b = p.breakdown;
  fmt::print(
      "\nbreakdown:  device active {:.3f} ms, device idle {:.3f} ms, CPU-bound {:.3f} ms, "
      "exposed communication {:.3f} ms\n",
      b.device_active_ms, b.device_idle_ms, b.cpu_bound_ms, b.exposed_comm_ms);
  if (!p.unmodelled_ops.empty()) {
    std::map<std::string, std::pair<int64_t, double>> by_name;
    for (const auto& o : p.unmodelled_ops) {
      auto& e = by_name[o.name + " [" + o.model + "]"];
      ++e.first;
      e.second += o.predicted_us;
    }
    fmt::print("\nunmodelled ops ({}; predicted from the device spec, not calibrated):\n",
               p.unmodelled_ops.size());
    for (const auto& [name, e] : by_name)
      fmt::print("  {:<72} x{:<5} {:>10.3f} ms\n", name, e.first, e.second / 1000);
  }
  for (const std::string& n : p.notes) fmt::print("note: {}\n", n);
}

core::kineto::LinkedTimeline recordedKernels(const core::Graph& graph, const std::string& kineto,
                                             const predictors::ModelSet& models,
                                             predictors::PredictOptions* opts) {
  // Recorded kernels time a GPU; on a CPU every op would read as 0 us.
  const predictors::DeviceSpec& dest = opts->target ? *opts->target : models.device;
  if (dest.kind == predictors::DeviceKind::kCpu) {
    throw UsageError(fmt::format(
        "--kernel-times predicts a GPU, and the destination '{}' is a CPU: give the GPU's "
        "--device-spec or models calibrated on it",
        dest.name));
  }
  auto timeline = core::kineto::linkTraces(graph, core::kineto::readKinetoTrace(kineto));
  if (timeline.kernels == 0) {
    throw InputError(fmt::format(
        "{}: no GPU kernel in this Kineto trace; --kernel-times needs the trace of a GPU run",
        kineto));
  }
  for (const auto& op : timeline.ops) {
    if (op.matched) {
      opts->recorded_kernels[op.id] = {op.device_us, static_cast<int64_t>(op.kernels.size())};
    }
  }
  fmt::print("kernel times: {} of {} top-level ops linked to {} ({})\n", timeline.matched_ops,
             timeline.top_level_ops, kineto, timeline.method);
  if (timeline.unlaunched_activities > 0) {
    fmt::print(
        "warning: {} of the trace's {} GPU activities have no launch in it: their ops' "
        "recorded device time is short by them\n",
        timeline.unlaunched_activities, timeline.activities);
  }
  return timeline;
}

void writeJson(const nlohmann::json& j, const std::string& path) {
  if (!path.empty()) core::writeTextFile(path, j.dump(2) + "\n");
}

void applyTargets(const PredictArgs& args, predictors::PredictOptions* opts) {
  if (!args.system.empty() && !args.comm_link.empty()) {
    // With a system the topology picks each collective's link; the option
    // was ignored, misspelt or not (a bad-input hunt).
    throw UsageError(fmt::format(
        "--comm-link {} with --system {}: the system's intra_node_link and inter_node_link "
        "choose each collective's link; drop --comm-link or edit the system file",
        args.comm_link, args.system));
  }
  if (!args.system.empty()) {
    opts->system = predictors::loadSystemSpec(args.system);
    opts->target = opts->system->device;
  }
  if (!args.device_spec.empty()) {
    opts->target = predictors::loadDeviceSpec(args.device_spec);
    if (opts->system) {
      predictors::requireSystemsDevice(*opts->system, *opts->target, "--system " + args.system,
                                       "--device-spec " + args.device_spec);
    }
  }
  opts->overhead_statistic = args.overhead_stat == "mean" ? predictors::OverheadStatistic::kMean
                                                          : predictors::OverheadStatistic::kMedian;
  opts->overhead_statistic_from_table = args.overhead_stat.empty();
}

namespace {

void runPredict(const PredictArgs& args) {
  requireDistinctOutputs({{"--json-out", &args.json_out}, {"--timeline", &args.timeline}});
  if (replay::dist::hasRankPlaceholder(args.trace)) {
    predictRanksCommand(args);
    return;
  }
  if (args.host_cores != 0) {
    // One trace (or --world-size copies of it) simulates each rank on a
    // host of its own: the option was ignored.
    throw UsageError(
        "--host-cores applies to the ranks of a job given trace by trace ('{rank}' in TRACE); "
        "one trace is predicted with a host of its own");
  }
  if (const std::string problem = core::inputFileProblem(args.trace); !problem.empty())
    throw UsageError(fmt::format("trace: {}: {}", problem, args.trace));
  // Left to the OS at exit (cli/keep_until_exit.h).
  core::Graph& graph = keepUntilExit(core::readTrace(args.trace));
  const std::set<core::DType> precisions = predictors::halfPrecisionsIn(graph);
  predictors::ModelSet models = predictors::ModelSet::load(args.models, "", &precisions);
  predictors::PredictOptions opts;
  applyTargets(args, &opts);
  if (!args.overheads.empty()) opts.overheads = predictors::loadOverheads(args.overheads);
  std::optional<core::kineto::LinkedTimeline> original;
  if (!args.kernel_times.empty()) {
    original.emplace(recordedKernels(graph, args.kernel_times, models, &opts));
  }
  opts.default_world_size = std::max<int64_t>(args.world_size, 1);
  opts.comm_link = args.comm_link;
  // Checked here, not when the first collective is predicted: a trace
  // without collectives took `--comm-link bogus` and said nothing.
  if (!args.comm_link.empty())
    predictors::AlphaBetaModel::fromDevice(opts.target ? *opts.target : models.device,
                                           args.comm_link);
  opts.host_scale = args.host_scale;
  opts.keep_schedule = !args.timeline.empty();
  const IndexDistributionUse distributions =
      indexDistributionsFor(args.index_distribution, graph);
  opts.index_reuse = distributions.index_reuse;
  for (const std::string& note : distributions.notes) fmt::print("note: {}\n", note);
  if (args.world_size > 1) {
    // One rank's trace for a data-parallel job of N identical ranks.
    const predictors::MultiRankPrediction m =
        predictors::predictSymmetric(graph, args.world_size, models, opts);
    printReport(m.ranks[0].prediction, args);
    printRanks(m);
    if (!args.timeline.empty()) {
      // The ranks are identical by assumption: the one simulated rank is
      // drawn once (N copies would add nothing the simulation knows).
      timeline::Timeline t;
      if (original) t.views.push_back(timeline::originalView(graph, *original, args.kernel_times));
      t.views.push_back(timeline::predictionView(m.ranks[0].prediction));
      t.views.back().detail += fmt::format(
          "; one simulated rank standing for all {} identical ranks (--world-size)",
          args.world_size);
      t.notes.push_back(fmt::format(
          "symmetric: --world-size {} with one trace; every rank is this one, so it is drawn "
          "once, not {} times (no rank waits for another)",
          args.world_size, args.world_size));
      writeTimelineFile(args.timeline, t);
    }
    writeJson(predictors::multiRankToJson(m), args.json_out);
    return;
  }
  predictors::Prediction p = predictors::predictGraph(graph, models, opts);
  printReport(p, args);
  if (!args.timeline.empty()) {
    timeline::Timeline t;
    if (original) t.views.push_back(timeline::originalView(graph, *original, args.kernel_times));
    t.views.push_back(timeline::predictionView(p));
    writeTimelineFile(args.timeline, t);
  }
  writeJson(predictors::predictionToJson(p), args.json_out);
}

std::function<void()> setupPredict(CLI::App& sub) {
  auto args = std::make_shared<PredictArgs>();
  sub.add_option("trace", args->trace,
                 "Execution trace (.json or .json.gz); with {rank} in the path, every rank of a "
                 "job (rank 0, 1, ... while the files exist), simulated together")
      ->required();
  sub.add_option("--models", args->models, "Model directory written by `tracetwin calibrate`")
      ->required();
  sub.add_option(
         "--device-spec", args->device_spec,
         "Predict for this device (configs/devices/*.yaml): calibrated times are scaled to it")
      ->check(CLI::ExistingFile);
  addIndexDistributionOption(sub, args->index_distribution);
  sub.add_option("--overheads", args->overheads,
                 "CPU overheads JSON written by `tracetwin link` ({rank}: one per rank)");
  sub.add_option("--kernel-times", args->kernel_times,
                 "Kineto trace of the original run ({rank}: one per rank): its recorded kernel "
                 "times replace the kernel models' (judges the CPU-overhead model and critical "
                 "path alone)");
  sub.add_option("--world-size", args->world_size,
                 "A trace without {rank}: the job's ranks, every one running this trace "
                 "(symmetric; every collective on all of them). With {rank}: how many ranks to "
                 "read (default: while the files exist)")
      ->check(wholeNumberFor<int64_t>(1));
  sub.add_option("--rank-starts", args->rank_starts,
                 "With {rank}: 'together' (every rank enters the iteration at once) or "
                 "'recorded' (when each rank entered it in its --kernel-times trace; the ranks' "
                 "traces must share a clock, as on one host)")
      ->check(CLI::IsMember({"together", "recorded"}))
      ->default_str("together");
  sub.add_option("--system", args->system,
                 "Predict on this cluster (configs/systems/*.yaml): collectives run on its "
                 "topology (hierarchical across nodes), times scale to its device unless "
                 "--device-spec names another")
      ->check(CLI::ExistingFile);
  sub.add_option("--overhead-stat", args->overhead_stat,
                 "Which statistic of the measured CPU overheads T1-T5 to charge: median (robust) "
                 "or mean (what a step's sum of gaps averages to; files from `link` since "
                 "session 36 record it, older ones fall back to the median); default: the "
                 "median, or the mean where the table says \"statistic\": \"mean\" (T1-T5 "
                 "corrected for the profiler's cost by link/fit since 2026-11-27)")
      ->check(CLI::IsMember({"median", "mean"}));
  sub.add_option("--comm-link", args->comm_link,
                 "Link collectives use (nvlink, pcie, ...); default: fastest");
  addHostCoresOption(sub, args->host_cores,
                     "CPU ranks of a multi-rank prediction share this many cores of one host "
                     "(default: the device spec's compute_units; -1: every rank on a host of its "
                     "own; docs/prediction.md \"Co-located ranks\")");
  sub.add_option("--host-scale", args->host_scale,
                 "Scale the host's CPU-side costs (T1-T5): 0.5 predicts a host twice as fast "
                 "(replay --host-time recorded --host-scale 0.5 replays the same what-if)")
      ->check(numberAbove(0, kMaxHostScale));
  sub.add_option("--json-out", args->json_out, "Write the prediction as JSON")->check(outputFile());
  sub.add_option(
         "--timeline", args->timeline,
         "Write the simulated iteration as a Chrome/Perfetto timeline (.json or .json.gz), "
         "beside the original's with --kernel-times; with {rank}, each rank its own group and "
         "arrows between a collective's members (docs/timeline.md)")
      ->check(outputFile());
  return [args] { runPredict(*args); };
}

}  // namespace

TRACETWIN_REGISTER_COMMAND(predict, "Predict one iteration's time from calibrated models",
                           setupPredict);

}  // namespace tracetwin::cli
