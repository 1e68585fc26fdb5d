// `tracetwin predict TRACE --models DIR [--device-spec FILE] [--overheads FILE]
// [--json-out FILE]`: the predicted iteration time of one iteration of TRACE,
// per-family totals, the breakdown and the ops no calibrated model covers.
// Needs neither LibTorch nor a GPU.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "cli/command_registry.h"
#include "cli/timeline_file.h"
#include "core/errors.h"
#include "core/kineto/kineto_reader.h"
#include "core/kineto/linker.h"
#include "core/trace_reader.h"
#include "predictors/specs/device_spec.h"
#include "predictors/models/model_set.h"
#include "predictors/host/overheads.h"
#include "predictors/simulation/predictor.h"
#include "timeline/sources.h"

namespace tracetwin::cli {
namespace {

struct PredictArgs {
  std::string trace;
  std::string models;
  std::string device_spec;
  std::string overheads;
  std::string kernel_times;
  std::string json_out;
  std::string comm_link;
  std::string timeline;
  int64_t world_size = 1;
};

struct FamilyTotal {
  int64_t ops = 0;
  double device_us = 0;
  double cpu_us = 0;
};

void printReport(const predictors::Prediction& p, const PredictArgs& args) {
  fmt::print("trace:      {}\n", args.trace);
  fmt::print("device:     {}\n", p.device);
  fmt::print("iteration:  {:.3f} ms predicted ({} ops)\n\n", p.iteration_ms, p.per_op.size());
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

void runPredict(const PredictArgs& args) {
  core::Graph graph = core::readTrace(args.trace);
  predictors::ModelSet models = predictors::ModelSet::load(args.models);
  predictors::PredictOptions opts;
  if (!args.device_spec.empty()) opts.target = predictors::loadDeviceSpec(args.device_spec);
  if (!args.overheads.empty()) opts.overheads = predictors::loadOverheads(args.overheads);
  std::optional<core::kineto::LinkedTimeline> original;
  if (!args.kernel_times.empty()) {
    // Recorded kernels time a GPU; on a CPU every op would read as 0 us.
    const predictors::DeviceSpec& dest = opts.target ? *opts.target : models.device;
    if (dest.kind == predictors::DeviceKind::kCpu) {
      throw UsageError(fmt::format(
          "--kernel-times predicts a GPU, and the destination '{}' is a CPU: give the GPU's "
          "--device-spec or models calibrated on it",
          dest.name));
    }
    const auto& timeline = original.emplace(
        core::kineto::linkTraces(graph, core::kineto::readKinetoTrace(args.kernel_times)));
    if (timeline.kernels == 0) {
      throw InputError(fmt::format(
          "{}: no GPU kernel in this Kineto trace; --kernel-times needs the trace of a GPU run",
          args.kernel_times));
    }
    for (const auto& op : timeline.ops) {
      if (op.matched) {
        opts.recorded_kernels[op.id] = {op.device_us, static_cast<int64_t>(op.kernels.size())};
      }
    }
    fmt::print("kernel times: {} of {} top-level ops linked to {} ({})\n", timeline.matched_ops,
               timeline.top_level_ops, args.kernel_times, timeline.method);
  }
  opts.default_world_size = args.world_size;
  opts.comm_link = args.comm_link;
  opts.keep_schedule = !args.timeline.empty();
  predictors::Prediction p = predictors::predictGraph(graph, models, opts);
  printReport(p, args);
  if (!args.timeline.empty()) {
    timeline::Timeline t;
    if (original) t.views.push_back(timeline::originalView(graph, *original, args.kernel_times));
    t.views.push_back(timeline::predictionView(p));
    writeTimelineFile(args.timeline, t);
  }
  if (!args.json_out.empty()) {
    std::ofstream out(args.json_out);
    out << predictors::predictionToJson(p).dump(2) << "\n";
    if (!out) throw InputError(fmt::format("{}: cannot write JSON report", args.json_out));
  }
}

std::function<void()> setupPredict(CLI::App& sub) {
  auto args = std::make_shared<PredictArgs>();
  sub.add_option("trace", args->trace, "Execution trace (.json or .json.gz)")
      ->required()
      ->check(CLI::ExistingFile);
  sub.add_option("--models", args->models, "Model directory written by `tracetwin calibrate`")
      ->required();
  sub.add_option(
         "--device-spec", args->device_spec,
         "Predict for this device (configs/devices/*.yaml): calibrated times are scaled to it")
      ->check(CLI::ExistingFile);
  sub.add_option("--overheads", args->overheads, "CPU overheads JSON written by `tracetwin link`")
      ->check(CLI::ExistingFile);
  sub.add_option("--kernel-times", args->kernel_times,
                 "Kineto trace of the original run: its recorded kernel times replace the kernel "
                 "models' (judges the CPU-overhead model and critical path alone)")
      ->check(CLI::ExistingFile);
  sub.add_option("--world-size", args->world_size,
                 "World size for collectives whose trace records none")
      ->check(CLI::PositiveNumber);
  sub.add_option("--comm-link", args->comm_link,
                 "Link collectives use (nvlink, pcie, ...); default: fastest");
  sub.add_option("--json-out", args->json_out, "Write the prediction as JSON");
  sub.add_option("--timeline", args->timeline,
                 "Write the simulated iteration as a Chrome/Perfetto timeline (.json or .json.gz), "
                 "beside the original's with --kernel-times (docs/timeline.md)");
  return [args] { runPredict(*args); };
}

}  // namespace

TRACETWIN_REGISTER_COMMAND(predict, "Predict one iteration's time from calibrated models",
                           setupPredict);

}  // namespace tracetwin::cli
