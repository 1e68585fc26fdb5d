// `tracetwin fit --device-spec FILE --out DIR ET KINETO [ET KINETO ...]`:
// kernel models and CPU overheads of a device fitted from original runs
// recorded on it (an ET and its Kineto trace per run) instead of from
// microbenchmarks replayed there. Needs neither LibTorch nor the device:
// the traces carry the measurements (predictors/models/trace_samples.h).
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command_registry.h"
#include "cli/fit_report.h"
#include "cli/number_checks.h"
#include "cli/unprofiled_overheads.h"
#include "core/errors.h"
#include "core/input_files.h"
#include "core/kineto/kineto_reader.h"
#include "core/kineto/linker.h"
#include "core/kineto/overheads.h"
#include "core/trace_reader.h"
#include "predictors/comm/comm_fit.h"
#include "predictors/comm/comm_trace_samples.h"
#include "predictors/host/overheads.h"
#include "predictors/models/model_set.h"
#include "predictors/models/trace_samples.h"
#include "predictors/models/training.h"
#include "predictors/specs/device_spec.h"
#include "replay/dist/rank_env.h"

namespace tracetwin::cli {
namespace {

struct FitArgs {
  std::string device_spec;
  std::string out_dir;
  std::vector<std::string> traces;  // ET, KINETO, ET, KINETO ...
  predictors::FitOptions fit;
};

// The (ET, Kineto) pairs of one argument pair: one run, or with {rank} in
// both paths every rank of a job (rank 0, 1, ... while both files exist).
std::vector<std::pair<std::string, std::string>> expandRanks(const std::string& et,
                                                             const std::string& kineto) {
  const bool ranked = replay::dist::hasRankPlaceholder(et);
  if (ranked != replay::dist::hasRankPlaceholder(kineto)) {
    throw UsageError(fmt::format("fit: {} and {}: name the ranks with {{rank}} in both paths",
                                 et, kineto));
  }
  if (!ranked) {
    for (const std::string& f : {et, kineto}) {
      if (const std::string problem = core::inputFileProblem(f); !problem.empty())
        throw UsageError(fmt::format("fit: {}: {}", problem, f));
    }
    return {{et, kineto}};
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (int r = 0;; ++r) {
    std::string e = replay::dist::expandRankPath(et, r), k = replay::dist::expandRankPath(kineto, r);
    if (!std::filesystem::is_regular_file(e) || !std::filesystem::is_regular_file(k)) break;
    out.push_back({std::move(e), std::move(k)});
  }
  if (out.size() < 2) {
    throw UsageError(fmt::format("fit: {} names {} rank(s) with both files; a job has two or more",
                                 et, out.size()));
  }
  return out;
}

// Per collective of a job: its transfer (the last arrival's kernel) and each
// rank's wait; per rank the totals.
void printCommSplit(const predictors::CommTraceSamples& job, size_t ranks) {
  fmt::print("collectives matched across {} ranks; the last to arrive found by its kernel's {}\n",
             ranks, job.last_by == "start" ? "start (the ranks share a clock)"
                                            : "length (the shortest; no shared clock)");
  fmt::print("{:<22} {:>10} {:>10} {:>13}  wait us per rank\n", "collective", "bytes",
             "last rank", "transfer us");
  std::vector<double> comm(ranks, 0.0), transfer(ranks, 0.0);
  for (const predictors::CollectiveSplit& c : job.collectives) {
    std::string waits;
    for (size_t k = 0; k < c.members.size(); ++k) {
      waits += fmt::format(" {:.0f}", c.kernel_us[k] - c.transfer_us);
      comm[size_t(c.members[k])] += c.kernel_us[k];
      transfer[size_t(c.members[k])] += c.transfer_us;
    }
    fmt::print("{:<22} {:>10.0f} {:>10} {:>13.1f} {}\n", fmt::format("{} #{}", c.name, c.position),
               c.bytes, c.last_rank, c.transfer_us, waits);
  }
  fmt::print("{:>5} {:>15} {:>13} {:>9}\n", "rank", "comm kernels ms", "transfer ms", "wait ms");
  for (size_t r = 0; r < ranks; ++r) {
    fmt::print("{:>5} {:>15.3f} {:>13.3f} {:>9.3f}\n", r, comm[r] / 1e3, transfer[r] / 1e3,
               (comm[r] - transfer[r]) / 1e3);
  }
  for (const std::string& n : job.notes) fmt::print("note: {}\n", n);
}

// The recording a trace is of: a run given twice (the same file under two
// names, a repeated glob) would count its ops twice and put copies of
// training samples in the hold-out set. Empty when the trace records no
// time to tell runs apart by.
std::string recordingOf(const core::Graph& graph) {
  if (graph.time.empty() && graph.start_ts == 0 && graph.finish_ts == 0) return "";
  return fmt::format(
      "pid {}, recorded at {}{}, {} nodes", graph.pid,
      graph.time.empty() ? "" : "'" + graph.time + "' ",
      graph.start_ts != 0 ? fmt::format("(start_ts {})", graph.start_ts) : std::string(),
      graph.nodes().size());
}

void runFit(const FitArgs& args) {
  if (args.traces.empty() || args.traces.size() % 2 != 0) {
    throw UsageError(fmt::format("fit takes pairs of ET and Kineto trace paths; got {} path(s)",
                                 args.traces.size()));
  }
  predictors::ModelSet models;
  models.device = predictors::loadDeviceSpec(args.device_spec);
  // The samples are GPU kernel times; a CPU's ops are timed by calibrate.
  if (models.device.kind == predictors::DeviceKind::kCpu) {
    throw UsageError(
        fmt::format("{}: '{}' is a CPU; fit learns from the GPU kernels of recorded "
                    "runs (a CPU's models come from `tracetwin calibrate`)",
                    args.device_spec, models.device.name));
  }
  std::vector<predictors::MeasuredOp> samples;
  std::vector<predictors::CommSample> comm_samples;
  core::kineto::OverheadCollector overheads;
  std::map<std::string, std::pair<int64_t, int64_t>> family_ops;  // with / without kernels
  std::map<std::string, std::string> seen;  // recording -> the ET that holds it
  for (size_t i = 0; i < args.traces.size(); i += 2) {
    const auto runs = expandRanks(args.traces[i], args.traces[i + 1]);
    std::vector<core::Graph> graphs;
    std::vector<core::kineto::LinkedTimeline> timelines;
    graphs.reserve(runs.size());
    timelines.reserve(runs.size());
    for (const auto& [et, kineto_path] : runs) {
      graphs.push_back(core::readTrace(et));
      const core::Graph& graph = graphs.back();
      const std::string recording = recordingOf(graph);
      if (auto [it, fresh] = seen.emplace(recording, et); !fresh && !recording.empty()) {
        throw InputError(fmt::format(
            "fit: {} and {} are the same run ({}): its ops would be counted twice and the "
            "hold-out set would hold copies of training samples",
            it->second, et, recording));
      }
      const core::kineto::KinetoTrace kineto = core::kineto::readKinetoTrace(kineto_path);
      timelines.push_back(core::kineto::linkTraces(graph, kineto));
      const core::kineto::LinkedTimeline& timeline = timelines.back();
      if (const std::string weak = core::kineto::weakLinkWarning(timeline); !weak.empty())
        fmt::print(stderr, "{}\n", weak);
      predictors::TraceSamples got =
          predictors::samplesFromLinkedTrace(graph, timeline, models.device.name);
      fmt::print(
          "{}: {} of {} top-level ops timed by their kernels ({} without kernels, {} not linked, "
          "{} collectives{} left out; {})\n",
          et, got.samples.size(), got.top_level_ops, got.without_kernels, got.unmatched,
          got.collectives,
          got.autocast_with_casts
              ? fmt::format(" and {} autocast ops with casts", got.autocast_with_casts)
              : "",
          timeline.method);
      for (auto& s : got.samples) samples.push_back(std::move(s));
      for (const auto& [family, counts] : got.family_ops) {
        family_ops[family].first += counts.first;
        family_ops[family].second += counts.second;
      }
      const UnprofiledOverheads unprofiled = unprofiledOverheads(et, timeline, kineto);
      fmt::print("{}\n", unprofiled.note);
      using Correction = core::kineto::OverheadCollector::Correction;
      overheads.addTrace(kineto, core::kineto::operatorsOfGraph(graph), unprofiled.host_us,
                         unprofiled.device_bound ? Correction::kToSpanAtMost : Correction::kBorrow);
      if (unprofiled.host_us > 0)
        fmt::print("  T1-T5 samples: {}{:.3f} us per profiler record off, then x{:.3f}{}\n",
                   unprofiled.device_bound ? "at least " : "",
                   overheads.lastCorrection().per_event_us, overheads.lastCorrection().scale,
                   unprofiled.device_bound
                       ? " (device-bound: the least the profiler cost, see below)"
                       : "");
      else
        fmt::print("  T1-T5 samples: the corrected traces' median cost per record off (below)\n");
    }
    if (runs.size() > 1) {
      std::vector<predictors::LinkedRank> ranks;
      for (size_t r = 0; r < runs.size(); ++r) ranks.push_back({&graphs[r], &timelines[r]});
      const predictors::CommTraceSamples job = predictors::commSamplesFromRanks(ranks);
      printCommSplit(job, runs.size());
      for (const auto& s : job.samples) comm_samples.push_back(s);
    }
  }
  for (const std::string& family : predictors::keepFamiliesThatLaunch(family_ops, &samples)) {
    fmt::print("{}: {} of {} linked ops launched kernels; not learned (the device's fallback)\n",
               family, family_ops[family].first,
               family_ops[family].first + family_ops[family].second);
  }
  if (samples.empty()) {
    throw InputError("fit: no op of these traces has recorded kernels to learn from");
  }
  if (const int at_most = overheads.atMostTracesBorrowing(); at_most > 0) {
    fmt::print(
        "T1-T5 samples of {} device-bound trace(s): {:.3f} us per profiler record off, the median "
        "of the traces corrected to their step, which takes off more than their own\n",
        at_most, overheads.borrowedPerRecordUs());
  }
  if (overheads.borrowingTraces() > 0) {
    fmt::print(
        "T1-T5 samples of the {} trace(s) without an unprofiled host span: {}\n",
        overheads.borrowingTraces(),
        overheads.borrowedPerRecordUs() > 0
            ? fmt::format("{:.3f} us per profiler record off, the median of the corrected traces",
                          overheads.borrowedPerRecordUs())
            : std::string("as recorded (no trace had one to borrow from)"));
  }
  predictors::FitOptions fo = args.fit;
  fo.torch_version = "recorded traces";
  const predictors::FitReport report = predictors::fitModels(samples, models.device, fo, &models);
  // The overheads file format is the one interface between core's collector
  // and the predictors' table (what `link --overheads-out` writes).
  models.overheads = predictors::OverheadTable::fromJson(
      nlohmann::json::parse(core::kineto::overheadsToJson(overheads.finish())), "fit overheads");
  if (!comm_samples.empty()) {
    const predictors::CommFit fit = predictors::fitCommModels(comm_samples);
    printCommFit(fit);
    auto comm = predictors::AlphaBetaModel::fromDevice(models.device);
    predictors::applyCommFit(fit, comm.get());
    models.setModel("comm", comm);
  }
  models.save(args.out_dir);

  printFitReport(report);
  fmt::print("models: {} ({} samples, device {}, CPU overheads T1-T5 from the same traces{})\n",
             args.out_dir, samples.size(), models.device.name,
             comm_samples.empty() ? ""
                                  : fmt::format(", comm from {} collectives' last arrivals",
                                                comm_samples.size()));
}

std::function<void()> setupFit(CLI::App& sub) {
  auto args = std::make_shared<FitArgs>();
  sub.add_option("traces", args->traces,
                 "ET and Kineto trace of each original run, in pairs; with {rank} in both, every "
                 "rank of a job (its collectives then teach the comm model: the last arrival's "
                 "kernel is the transfer)")
      ->required();
  sub.add_option("--device-spec", args->device_spec,
                 "The device the runs were recorded on (configs/devices/*.yaml)")
      ->required()
      ->check(CLI::ExistingFile);
  sub.add_option("--out", args->out_dir, "Model directory to write")->required();
  sub.add_option("--holdout", args->fit.holdout_fraction,
                 "Share of the ops held out to measure accuracy")
      ->check(numberIn(0, 0.9))
      ->default_str("0.2");
  sub.add_option("--min-xgboost-samples", args->fit.min_samples_for_xgboost,
                 "Below this many training ops a family keeps its analytic model")
      ->check(wholeNumberFor<int>(1))
      ->default_str("40");
  return [args] { runFit(*args); };
}

}  // namespace

TRACETWIN_REGISTER_COMMAND(fit,
                           "Fit kernel models and CPU overheads from recorded runs (ET + Kineto)",
                           setupFit);

}  // namespace tracetwin::cli
