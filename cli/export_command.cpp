// `tracetwin export --chakra OUT TRACE [--kineto K] [--from kineto|replay|
// prediction] [--models DIR]`: writes the trace as a Chakra protobuf ET, the
// input of ASTRA-sim, with each top-level op's duration from the original
// run's Kineto trace, a replay or the prediction. '{rank}' in TRACE (and
// --kineto, OUT) exports every rank whose file exists, one file each.
// Compiled into both executables: tracetwin exports without LibTorch and
// hands `--from replay` to tracetwin-replay (cli/export_replay.h).
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/chakra_export.h"
#include "cli/command_registry.h"
#include "cli/export_replay.h"
#include "cli/number_checks.h"
#include "cli/recorded_kineto.h"
#include "cli/replay_exec.h"
#include "core/chakra/chakra_trace.h"
#include "core/errors.h"
#include "core/kineto/kineto_reader.h"
#include "core/kineto/linker.h"
#include "core/trace_reader.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/predictor.h"
#include "replay/dist/rank_env.h"

namespace tracetwin::cli {
namespace {

struct ExportArgs {
  std::string out;
  std::string trace;
  std::string kineto;
  std::string from;  // empty: kineto when one is given or recorded beside, else none
  std::string models;
  std::string device = "cpu";
  int iters = 3;
  std::string program;  // argv[0], for tracetwin-replay
  // Given on the command line (their defaults aside): read by --from replay only.
  bool device_given = false;
  bool iters_given = false;
};

DurationSource fromKineto(const core::Graph& graph, const std::string& kineto) {
  const auto linked = core::kineto::linkTraces(graph, core::kineto::readKinetoTrace(kineto));
  DurationSource d;
  d.name = "kineto";
  d.device = linked.kernels > 0;
  for (const auto& op : linked.ops) {
    if (!op.matched) continue;
    d.ops[op.id] = {op.device_us, op.duration_us, op.start_us - linked.iteration_start_us};
  }
  fmt::print("  durations: {} of {} ops linked to {} ({})\n", linked.matched_ops,
             linked.top_level_ops, kineto, linked.method);
  return d;
}

// `--from replay` in tracetwin, which does not replay: the same export run
// by tracetwin-replay (cli/replay_exec.h), its options spelled out.
[[noreturn]] void forwardToReplayHelper(const ExportArgs& a) {
  std::vector<std::string> args{a.program,
                                "export",
                                "--chakra",
                                a.out,
                                a.trace,
                                "--from",
                                "replay",
                                "--device",
                                a.device,
                                "--iters",
                                std::to_string(a.iters)};
  if (!a.kineto.empty()) args.insert(args.end(), {"--kineto", a.kineto});
  if (!a.models.empty()) args.insert(args.end(), {"--models", a.models});
  execReplayHelper("export --from replay", args);
}

DurationSource fromPrediction(const core::Graph& graph, const predictors::ModelSet& models) {
  predictors::PredictOptions opts;
  opts.keep_schedule = true;
  const predictors::Prediction p = predictors::predictGraph(graph, models, opts);
  DurationSource d;
  d.name = "prediction";
  d.device = models.device.kind != predictors::DeviceKind::kCpu;
  for (size_t i = 0; i < p.per_op.size(); ++i) {
    const auto& o = p.per_op[i];
    const auto& s = p.schedule[i].times;
    const double start = s.kernels.empty() ? s.cpu_start_us : s.kernels.front().start_us;
    d.ops[o.id] = {d.device ? o.predicted_us : 0.0, d.device ? o.cpu_us : o.predicted_us, start};
  }
  fmt::print("  durations: predicted for {} ({} ops, {:.3f} ms)\n", p.device, p.per_op.size(),
             p.iteration_ms);
  return d;
}

std::string typeCounts(const std::map<std::string, int64_t>& types) {
  std::string out;
  for (const auto& [type, n] : types)
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", type, n);
  return out;
}

void exportOne(const ExportArgs& a, const std::string& trace, const std::string& kineto,
               const std::string& out, int64_t rank, int64_t world,
               const predictors::ModelSet* models) {
  fmt::print("{}{}\n", rank >= 0 ? fmt::format("rank {}: ", rank) : "", trace);
  const core::Graph graph = core::readTrace(trace);
  DurationSource durations;
  durations.name = "none";
  std::string from = a.from;
  if (from.empty()) from = kineto.empty() ? "none" : "kineto";
  if (from == "kineto") durations = fromKineto(graph, kineto);
  if (from == "replay") durations = replayDurations(graph, a.device, a.iters);
  if (from == "prediction") durations = fromPrediction(graph, *models);
  if (from == "none") {
    fmt::print(
        "  durations: none (no Kineto trace beside the trace; --kineto K, --from replay or --from "
        "prediction --models DIR give them): compute nodes have duration 0\n");
  }
  const core::chakra::ExportPlan plan = buildExportPlan(graph, durations, rank, world);
  const std::filesystem::path parent = std::filesystem::path(out).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  const auto t0 = std::chrono::steady_clock::now();
  const core::chakra::WriteStats s = core::chakra::writeChakraTrace(out, graph, plan);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  fmt::print(
      "  wrote {}: {} nodes ({}), {} data deps, {} bytes of collectives; {} bytes in "
      "{:.1f} ms\n",
      out, s.nodes, typeCounts(s.node_types), s.data_deps, s.comm_bytes, s.file_bytes, ms);
}

void runExport(const ExportArgs& a) {
  using replay::dist::expandRankPath;
  using replay::dist::hasRankPlaceholder;
  if (!a.from.empty() && a.from != "kineto" && a.from != "replay" && a.from != "prediction") {
    throw UsageError(fmt::format("--from {}: expected kineto, replay or prediction", a.from));
  }
  if (a.from == "kineto" && a.kineto.empty() &&
      recordedKinetoBeside(expandRankPath(a.trace, 0)).empty()) {
    throw UsageError("--from kineto needs --kineto K (no Kineto trace was recorded beside TRACE)");
  }
  if (!a.models.empty() && a.from != "prediction") {
    throw UsageError("--models is read by --from prediction only: add it, or drop --models");
  }
  // Ignored otherwise: a `--from prediction --device cuda` exported the
  // host's prediction and said nothing (a bad-input hunt).
  for (const auto& [given, option] :
       {std::pair{a.device_given, "--device"}, std::pair{a.iters_given, "--iters"}}) {
    if (given && a.from != "replay") {
      throw UsageError(fmt::format(
          "{} is read by --from replay only (durations {}): add --from replay, or drop {}", option,
          a.from.empty() ? "from the recorded Kineto trace" : "from " + a.from, option));
    }
  }
  if (a.from == "replay" && !exportReplaysHere()) forwardToReplayHelper(a);
  std::unique_ptr<predictors::ModelSet> models;
  if (a.from == "prediction") {
    if (a.models.empty()) throw UsageError("--from prediction needs --models DIR");
    models = std::make_unique<predictors::ModelSet>(predictors::ModelSet::load(a.models));
  }
  const bool ranks = hasRankPlaceholder(a.trace);
  if (ranks && !hasRankPlaceholder(a.out)) {
    throw UsageError(fmt::format(
        "{}: '{{rank}}' in TRACE writes one file per rank: put '{{rank}}' in the output path too",
        a.out));
  }
  int world = 1;
  if (ranks) {
    world = replay::dist::countRankFiles(a.trace);
    if (world == 0) {
      throw InputError(
          fmt::format("{}: no file for rank 0 ({})", a.trace, expandRankPath(a.trace, 0)));
    }
  }
  for (int r = 0; r < world; ++r) {
    const std::string trace = ranks ? expandRankPath(a.trace, r) : a.trace;
    std::string kineto = a.kineto.empty() ? "" : (ranks ? expandRankPath(a.kineto, r) : a.kineto);
    if (kineto.empty() && (a.from.empty() || a.from == "kineto"))
      kineto = recordedKinetoBeside(trace);
    const std::string out = ranks ? expandRankPath(a.out, r) : expandRankPath(a.out, 0);
    exportOne(a, trace, kineto, out, ranks ? r : -1, ranks ? world : -1, models.get());
  }
}

std::function<void()> setupExport(CLI::App& sub) {
  auto args = std::make_shared<ExportArgs>();
  args->program = sub.get_parent() != nullptr ? sub.get_parent()->get_name() : "tracetwin";
  sub.add_option("--chakra", args->out,
                 "write a Chakra protobuf ET here ('{rank}' is each rank's number; '.gz' "
                 "compresses)")
      ->required();
  sub.add_option("trace", args->trace,
                 "execution trace (.json, .json.gz or Chakra); '{rank}' exports every rank whose "
                 "file exists")
      ->required();
  sub.add_option("--kineto", args->kineto,
                 "Kineto trace of the original run ('{rank}' as in TRACE): the durations it "
                 "recorded (default: the one recorded beside TRACE, if any)");
  sub.add_option("--from", args->from,
                 "where durations come from: kineto (the original run), replay (replays each "
                 "rank's trace here), prediction (needs --models)")
      ->check(CLI::IsMember({"kineto", "replay", "prediction"}));
  sub.add_option("--models", args->models, "--from prediction: the model directory");
  CLI::Option* device =
      sub.add_option("--device", args->device, "--from replay: cpu, cuda or cuda:N")
          ->capture_default_str();
  CLI::Option* iters = sub.add_option("--iters", args->iters, "--from replay: measured iterations")
                           ->capture_default_str()
                           ->check(wholeNumberFor<int>(1));
  return [args, device, iters] {
    args->device_given = device->count() > 0;
    args->iters_given = iters->count() > 0;
    runExport(*args);
  };
}

}  // namespace

TRACETWIN_REGISTER_COMMAND(export, "Write a trace as a Chakra protobuf ET (ASTRA-sim's input)",
                           setupExport);

}  // namespace tracetwin::cli
