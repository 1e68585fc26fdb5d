// `tracetwin sweep FILE --models DIR [--json-out F] [--csv F] [--top K]
// [--emit-traces DIR]`: every embedding-sharding plan of a sweep file
// predicted with the multi-rank predictor and ranked (docs/sweeps.md).
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "cli/command_registry.h"
#include "cli/number_checks.h"
#include "cli/output_paths.h"
#include "cli/sweep_measure.h"
#include "core/errors.h"
#include "core/text_file.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/joint_prediction.h"
#include "predictors/specs/device_spec.h"
#include "predictors/specs/system_spec.h"
#include "sweep/composed_model.h"
#include "sweep/index_side_file.h"
#include "sweep/plan_traces.h"
#include "sweep/step_trace.h"
#include "sweep/strategies.h"
#include "sweep/sweep_output.h"
#include "sweep/sweep_run.h"
#include "sweep/sweep_spec.h"

namespace tracetwin::cli {
namespace {

struct SweepArgs {
  std::string file;
  std::string models;
  std::string json_out;
  std::string csv;
  std::string emit_traces;
  int64_t top = 20;
  bool measure = false;
  MeasureArgs measure_args;
  size_t full_max = 50;
  size_t verify = 5;
};

// A progress bar on a terminal (stderr), redrawn at most every 100 ms.
std::function<void(size_t, size_t)> progressBar() {
  if (!::isatty(STDERR_FILENO)) return {};
  auto last = std::make_shared<std::chrono::steady_clock::time_point>();
  return [last](size_t done, size_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (done != total && now - *last < std::chrono::milliseconds(100)) return;
    *last = now;
    const int width = 40;
    const int filled = int(double(width) * double(done) / double(std::max<size_t>(total, 1)));
    fmt::print(stderr, "\r[{}{}] {}/{} plans", std::string(size_t(filled), '#'),
               std::string(size_t(width - filled), ' '), done, total);
    if (done == total) fmt::print(stderr, "\n");
    std::fflush(stderr);
  };
}

void emitTraces(const sweep::SweepSpec& spec, const std::vector<sweep::Plan>& plans,
                const std::string& dir) {
  std::vector<const sweep::Plan*> all;
  for (const sweep::Plan& plan : plans) all.push_back(&plan);
  sweep::writePlanTraces(spec, all, dir);
  fmt::print("traces:     {} plans x {} ranks under {}/PLAN/rank{{rank}}.et.json (indices: "
             "--index-distribution {}/PLAN/{})\n",
             plans.size(), spec.world_size, dir, dir, sweep::indexSideFileName(-1));
}

void runSweep(const SweepArgs& args) {
  requireDistinctOutputs({{"--json-out", &args.json_out}, {"--csv", &args.csv}});
  if (args.measure) checkMeasureArgs(args.measure_args);
  const sweep::SweepSpec spec = sweep::loadSweepSpec(args.file);
  const predictors::ModelSet models = predictors::ModelSet::load(args.models);
  sweep::SweepOptions options;
  if (!spec.system.empty()) {
    options.predict.system = predictors::loadSystemSpec(spec.system);
    options.predict.target = options.predict.system->device;
  }
  if (!spec.device.empty() && spec.device != "cpu" && spec.device != "models") {
    options.predict.target = predictors::loadDeviceSpec(spec.device);
    if (options.predict.system) {
      predictors::requireSystemsDevice(*options.predict.system, *options.predict.target,
                                       "'system' " + spec.system,
                                       fmt::format("{}: 'device' {}", spec.source, spec.device));
    }
  }
  const predictors::DeviceSpec& device =
      options.predict.target ? *options.predict.target : models.device;
  options.memory_limit_bytes = spec.memory_bytes > 0 ? spec.memory_bytes : device.memory_bytes;
  // Fitted once when strategy greedy needs table costs or the sweep is screened.
  std::optional<sweep::ComposedModel> composed;
  const auto fitComposed = [&]() -> const sweep::ComposedModel& {
    if (!composed) composed = sweep::calibrateComposed(spec, models, options.predict);
    return *composed;
  };
  const std::vector<sweep::Plan> plans =
      sweep::expandPlans(spec, [&] { return fitComposed().tableCosts(); });
  if (plans.size() > args.full_max) options.composed = &fitComposed();
  if (!args.emit_traces.empty()) emitTraces(spec, plans, args.emit_traces);
  options.progress = progressBar();
  options.full_max = args.full_max;
  options.verify = args.verify;
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<sweep::PlanResult> ranked = sweep::runSweep(spec, plans, models, options);
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  fmt::print("sweep:      {} ({} tables, {} ranks, batch {} per rank, {} gradients)\n",
             args.file, spec.tables.size(), spec.world_size, spec.batch_size,
             spec.sparse_grad ? "sparse" : "dense");
  fmt::print("device:     {}\n", device.name);
  if (const double cores = predictors::sharedCores(models, options.predict, spec.world_size);
      cores > 0) {
    fmt::print("note:       {} ranks on one CPU host of {:g} cores: they share its cores, memory "
               "bandwidth and last-level cache (docs/prediction.md, \"Co-located ranks\")\n",
               spec.world_size, cores);
  }
  size_t infeasible = 0;
  for (const auto& p : ranked) infeasible += p.feasible ? 0 : 1;
  size_t joint = 0;
  for (const auto& p : ranked) joint += p.feasible && p.predicted_by == "joint" ? 1 : 0;
  const bool screened = joint + infeasible < ranked.size();
  fmt::print("plans:      {} in {:.2f} s: {}{}\n\n", plans.size(), secs,
             screened ? fmt::format("screened by the composed model (*), the best {} then "
                                    "predicted jointly",
                                    joint)
                      : "every plan predicted jointly",
             infeasible ? fmt::format(", {} infeasible (memory)", infeasible) : "");
  fmt::print("{:>4} {:<24} {:<12} {:>11} {:>10}  {}\n", "#", "plan", "strategy", "step ms",
             "imbalance", "per rank: embedding / dense / comm / wait ms (* composed model)");
  const size_t shown = std::min(ranked.size(), size_t(std::max<int64_t>(args.top, 1)));
  for (size_t k = 0; k < shown; ++k) {
    const sweep::PlanResult& p = ranked[k];
    if (!p.feasible) {
      fmt::print("{:>4} {:<24} {:<12} {:>11} {:>10}  {}\n", "-", p.plan.name, p.plan.strategy,
                 "infeasible", "", p.infeasible);
      continue;
    }
    std::string per_rank;
    for (const auto& r : p.ranks) {
      per_rank += fmt::format("{}r{}: {:.2f}/{:.2f}/{:.2f}/{:.2f}", per_rank.empty() ? "" : "  ",
                              r.rank, r.embedding_ms, r.dense_ms, r.comm_ms, r.wait_ms);
    }
    fmt::print("{:>4} {:<24} {:<12} {:>10.3f}{} {:>9.1f}%  {}\n", k + 1, p.plan.name,
               p.plan.strategy, p.predicted_ms, p.predicted_by == "joint" ? " " : "*",
               100 * p.imbalance, per_rank);
  }
  if (shown < ranked.size()) fmt::print("     ... {} more (--top)\n", ranked.size() - shown);
  if (!ranked.empty() && ranked[0].feasible) {
    std::vector<std::string> where;
    const std::vector<sweep::Placement> place = sweep::placementsOf(ranked[0].plan);
    for (size_t t = 0; t < spec.tables.size(); ++t) {
      where.push_back(fmt::format("{}->{}", spec.tables[t].name, sweep::placementCode(place[t])));
    }
    fmt::print("\nbest:       {} ({:.3f} ms): {}\n", ranked[0].plan.name, ranked[0].predicted_ms,
               fmt::join(where, " "));
  } else if (!ranked.empty()) {
    fmt::print("\nbest:       none: no plan fits in memory\n");
  }
  nlohmann::json extra = nlohmann::json::object();
  if (args.measure) {
    MeasureArgs m = args.measure_args;
    m.top = args.top;
    if (m.traces_dir.empty()) m.traces_dir = args.emit_traces;
    extra["measurement"] = measurePlans(spec, ranked, m);
  }
  if (!args.json_out.empty()) {
    core::writeTextFile(args.json_out, sweep::sweepJsonText(spec, ranked, device.name, extra));
  }
  if (!args.csv.empty()) core::writeTextFile(args.csv, sweep::sweepCsv(spec, ranked));
  // The files are written (their plans say why each is infeasible); the
  // exit status tells a script there is no best plan to take.
  if (!ranked.empty() && !ranked[0].feasible) {
    throw RuntimeFailure(fmt::format(
        "{}: none of the {} plan(s) fits in memory (plan '{}': {}); raise memory_gb, add ranks "
        "or split the largest tables",
        spec.source, ranked.size(), ranked[0].plan.name, ranked[0].infeasible));
  }
}

std::function<void()> setupSweep(CLI::App& sub) {
  auto args = std::make_shared<SweepArgs>();
  sub.add_option("file", args->file, "Sweep file (configs/sweeps/*.yaml, docs/sweeps.md)")
      ->required()
      ->check(CLI::ExistingFile);
  sub.add_option("--models", args->models, "Model directory written by `tracetwin calibrate`")
      ->required();
  sub.add_option("--json-out", args->json_out,
                 "Write every plan as JSON (plans: [{name, predicted_ms, ranks, assignment}], "
                 "best_predicted)")
      ->check(outputFile());
  sub.add_option("--csv", args->csv, "Write the ranked plans as CSV")->check(outputFile());
  sub.add_option("--top", args->top, "Print the best K plans (default 20)")
      ->check(wholeNumberFor<int64_t>(1));
  CLI::Option* measure = sub.add_flag(
      "--measure", args->measure,
      "Run the best --top plans (or --all) for real through the distributed replay "
      "(tracetwin replay --nproc world_size), alternated round by round; prints measured "
      "beside predicted steps, pick-best and Kendall tau");
  // Each read by --measure only: without it they were ignored in silence.
  sub.add_flag("--all", args->measure_args.all, "--measure: every feasible plan")->needs(measure);
  sub.add_option("--rounds", args->measure_args.rounds,
                 "--measure: rounds over the plans (default 3; each plan's median is reported)")
      ->check(wholeNumberFor<int64_t>(1))
      ->needs(measure);
  sub.add_option("--measure-iters", args->measure_args.iters,
                 "--measure: measured replay iterations per plan and round (default 20; each "
                 "round's step is their mean)")
      ->check(wholeNumberFor<int64_t>(1))
      ->needs(measure);
  sub.add_option("--measure-settle", args->measure_args.settle,
                 "--measure: untimed replay iterations between the refill of the upfront values "
                 "and each measured one (replay --settle; default 4)")
      ->check(wholeNumberFor<int64_t>(0))
      ->needs(measure);
  sub.add_option("--contender-rounds", args->measure_args.contender_rounds,
                 "--measure: after --rounds over every plan, N more rounds of only the plans "
                 "measured within --contender-within of the fastest, where the pick-best is "
                 "decided (default 0: none)")
      ->check(wholeNumberFor<int64_t>(0))
      ->needs(measure);
  sub.add_option("--contender-within", args->measure_args.contender_within,
                 "--measure --contender-rounds: how close to the fastest a plan races on, as a "
                 "fraction (default 0.15)")
      ->check(CLI::Range(0.0, 1.0))
      ->needs(measure);
  sub.add_option("--measure-device", args->measure_args.device,
                 "--measure: where the replay runs: cpu (Gloo, default) or cuda (a GPU per rank, "
                 "NCCL)")
      ->needs(measure);
  sub.add_option("--core-tolerance", args->measure_args.core_tolerance,
                 "--measure on a CPU: run each plan's round while every core reads within F "
                 "(e.g. 1.25) of the host's fast phase, again when one slowed during it "
                 "(docs/sweeps.md, \"Cores that slow down one at a time\"; default off)")
      ->check(CLI::Range(1.05, 100.0))
      ->needs(measure);
  sub.add_option("--full-max", args->full_max,
                 "Predict every plan jointly up to this many plans (default 50); beyond, screen "
                 "them with the composed model and predict the best --verify jointly")
      ->check(wholeNumber(0, 1000000000));  // unsigned: -1 wrapped to every plan
  sub.add_option("--verify", args->verify,
                 "Screened sweeps: how many of the best plans to predict jointly (default 5)")
      ->check(wholeNumber(0, 1000000000));
  sub.add_option("--emit-traces", args->emit_traces,
                 "Write each plan's per-rank execution traces to DIR/PLAN/rank{rank}.et.json "
                 "(replay them with `tracetwin replay 'DIR/PLAN/rank{rank}.et.json' --nproc N`)");
  return [args] { runSweep(*args); };
}

}  // namespace

TRACETWIN_REGISTER_COMMAND(sweep, "Predict and rank embedding-sharding plans of a sweep file",
                           setupSweep);

}  // namespace tracetwin::cli
