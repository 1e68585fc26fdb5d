// `tracetwin fit --device-spec FILE --out DIR ET KINETO [ET KINETO ...]`:
// kernel models and CPU overheads of a device fitted from original runs
// recorded on it (an ET and its Kineto trace per run) instead of from
// microbenchmarks replayed there. Needs neither LibTorch nor the device:
// the traces carry the measurements (predictors/models/trace_samples.h).
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command_registry.h"
#include "cli/fit_report.h"
#include "core/errors.h"
#include "core/kineto/kineto_reader.h"
#include "core/kineto/linker.h"
#include "core/kineto/overheads.h"
#include "core/trace_reader.h"
#include "predictors/specs/device_spec.h"
#include "predictors/models/model_set.h"
#include "predictors/host/overheads.h"
#include "predictors/models/trace_samples.h"
#include "predictors/models/training.h"

namespace tracetwin::cli {
namespace {

struct FitArgs {
  std::string device_spec;
  std::string out_dir;
  std::vector<std::string> traces;  // ET, KINETO, ET, KINETO ...
  predictors::FitOptions fit;
};

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
  core::kineto::OverheadCollector overheads;
  std::map<std::string, std::pair<int64_t, int64_t>> family_ops;  // with / without kernels
  for (size_t i = 0; i < args.traces.size(); i += 2) {
    const core::Graph graph = core::readTrace(args.traces[i]);
    const core::kineto::KinetoTrace kineto = core::kineto::readKinetoTrace(args.traces[i + 1]);
    const core::kineto::LinkedTimeline timeline = core::kineto::linkTraces(graph, kineto);
    predictors::TraceSamples got =
        predictors::samplesFromLinkedTrace(graph, timeline, models.device.name);
    fmt::print(
        "{}: {} of {} top-level ops timed by their kernels ({} without kernels, {} not linked, "
        "{} collectives{} left out; {})\n",
        args.traces[i], got.samples.size(), got.top_level_ops, got.without_kernels, got.unmatched,
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
    overheads.addTrace(kineto, core::kineto::operatorsOfGraph(graph));
  }
  for (const std::string& family : predictors::keepFamiliesThatLaunch(family_ops, &samples)) {
    fmt::print("{}: {} of {} linked ops launched kernels; not learned (the device's fallback)\n",
               family, family_ops[family].first,
               family_ops[family].first + family_ops[family].second);
  }
  if (samples.empty()) {
    throw InputError("fit: no op of these traces has recorded kernels to learn from");
  }
  predictors::FitOptions fo = args.fit;
  fo.torch_version = "recorded traces";
  const predictors::FitReport report = predictors::fitModels(samples, models.device, fo, &models);
  // The overheads file format is the one interface between core's collector
  // and the predictors' table (what `link --overheads-out` writes).
  models.overheads = predictors::OverheadTable::fromJson(
      nlohmann::json::parse(core::kineto::overheadsToJson(overheads.finish())), "fit overheads");
  models.save(args.out_dir);

  printFitReport(report);
  fmt::print("models: {} ({} samples, device {}, CPU overheads T1-T5 from the same traces)\n",
             args.out_dir, samples.size(), models.device.name);
}

std::function<void()> setupFit(CLI::App& sub) {
  auto args = std::make_shared<FitArgs>();
  sub.add_option("traces", args->traces, "ET and Kineto trace of each original run, in pairs")
      ->required()
      ->check(CLI::ExistingFile);
  sub.add_option("--device-spec", args->device_spec,
                 "The device the runs were recorded on (configs/devices/*.yaml)")
      ->required()
      ->check(CLI::ExistingFile);
  sub.add_option("--out", args->out_dir, "Model directory to write")->required();
  sub.add_option("--holdout", args->fit.holdout_fraction,
                 "Share of the ops held out to measure accuracy")
      ->check(CLI::Range(0.0, 0.9))
      ->default_str("0.2");
  sub.add_option("--min-xgboost-samples", args->fit.min_samples_for_xgboost,
                 "Below this many training ops a family keeps its analytic model")
      ->check(CLI::PositiveNumber)
      ->default_str("40");
  return [args] { runFit(*args); };
}

}  // namespace

TRACETWIN_REGISTER_COMMAND(fit,
                           "Fit kernel models and CPU overheads from recorded runs (ET + Kineto)",
                           setupFit);

}  // namespace tracetwin::cli
