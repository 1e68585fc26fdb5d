#include "cli/calibrate_comm.h"

#include <fmt/core.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>

#include "calibration/host_probe.h"
#include "cli/fit_report.h"
#include "cli/rank_launcher.h"
#include "core/errors.h"
#include "core/text_file.h"
#include "predictors/comm/comm_model.h"
#include "predictors/models/model_set.h"

namespace tracetwin::cli {
namespace {

namespace fs = std::filesystem;

nlohmann::json readJson(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: the distributed replay wrote no report", path.string()));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format("{}: byte {}: {}", path.string(), e.byte, e.what()));
  } catch (const nlohmann::json::exception& e) {  // a number no double holds
    throw InputError(fmt::format("{}: {}", path.string(), e.what()));
  }
}

// One `tracetwin replay TRACE --nproc P` of the sweep's trace; its merged report.
nlohmann::json replayOnRanks(const CommCalibrationArgs& args, const fs::path& trace, int ranks,
                             const fs::path& report) {
  LaunchSpec spec;
  spec.nproc = ranks;
  spec.program = ownExecutable();
  spec.argv = {spec.program,
               "replay",
               trace.string(),
               "--nproc",
               std::to_string(ranks),
               "--device",
               args.device,
               "--warmup",
               std::to_string(args.warmup),
               "--iters",
               std::to_string(args.iters),
               "--settle",
               "0",
               "--comm-timeout-s",
               fmt::format("{}", args.comm_timeout_s),
               "--json-out",
               report.string()};
  spec.grace_s = args.comm_timeout_s + 10;
  const LaunchResult launched = launchRanks(spec);
  if (const int code = launchExitCode(launched); code != 0) {
    const std::string who =
        launched.first_failed >= 0
            ? fmt::format("rank {} {}", launched.first_failed,
                          describeExit(launched.ranks[size_t(launched.first_failed)]))
            : "interrupted";
    if (code == 130) throw InterruptedError("calibrate comm: " + who);
    const std::string what = fmt::format(
        "calibrate comm: the distributed replay of {} on {} ranks failed ({}); its message is "
        "above",
        trace.string(), ranks, who);
    if (code == 3) throw UnavailableError(what);
    throw RuntimeFailure(what);
  }
  return readJson(report);
}

// The model set in `dir` to add the comm model to; a new one measured on
// this device when `dir` holds none.
predictors::ModelSet modelSetFor(const CommCalibrationArgs& args) {
  if (fs::exists(fs::path(args.out_dir) / predictors::ModelSet::kManifestName)) {
    fmt::print("adding the comm model to the model set in {}\n", args.out_dir);
    return predictors::ModelSet::load(args.out_dir);
  }
  calibration::ProbeOptions probe;
  probe.device = args.device;
  predictors::ModelSet set;
  set.device = calibration::probeDevice(probe).spec;
  set.torch_version = "comm sweep";
  fmt::print("{} holds no model set: a new one for {} (other families: their fallbacks)\n",
             args.out_dir, set.device.name);
  return set;
}

}  // namespace

void calibrateComm(const CommCalibrationArgs& args) {
  calibration::checkCommGrid(args.grid);
  const fs::path dir = fs::path(args.out_dir) / "comm_sweep";
  fs::create_directories(dir);
  predictors::ModelSet models = modelSetFor(args);
  const std::string device = args.device == "cuda" ? "cuda:0" : "cpu";
  std::vector<predictors::CommSample> samples;
  std::vector<calibration::CommJitterSample> jitter;
  const auto t0 = std::chrono::steady_clock::now();
  for (int p : args.grid.group_sizes) {
    std::vector<calibration::CommSweepCase> cases;
    const fs::path trace = dir / fmt::format("comm_sweep.p{}.et.json", p);
    core::writeTextFile(trace.string(), calibration::commSweepTrace(args.grid, p, device, &cases));
    fmt::print("comm sweep: {} collectives on {} ranks ({} x {} sizes x {} copies)\n",
               cases.size(), p, args.grid.collectives.size(), args.grid.sizes_bytes.size(),
               args.grid.copies);
    std::fflush(stdout);
    const nlohmann::json merged =
        replayOnRanks(args, trace, p, dir / fmt::format("comm_sweep.p{}.replay.json", p));
    for (auto& s : calibration::commSamplesFromReport(merged, cases, p)) samples.push_back(s);
    if (args.grid.spacer_mm > 0) {
      // The transfers are the model; a report without waits or spacer times
      // (a backend whose replay does not split them) leaves only the jitter out.
      try {
        jitter.push_back(calibration::commJitterFromReport(merged, cases, p));
      } catch (const InputError& e) {
        fmt::print("arrival jitter on {} ranks not measured: {}\n", p, e.what());
      }
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const predictors::CommFit fit = predictors::fitCommModels(samples);
  printCommFit(fit);
  // Start from the device's link (the fallback for collectives not swept).
  auto comm = std::make_shared<predictors::AlphaBetaModel>();
  if (const auto* old = dynamic_cast<const predictors::AlphaBetaModel*>(models.model("comm")))
    *comm = *old;
  else
    comm->fallback = predictors::AlphaBetaModel::fromDevice(models.device)->fallback;
  predictors::applyCommFit(fit, comm.get());
  // Measured only behind a spacer: a tight sweep leaves none (an older one
  // would not describe this sweep's host).
  comm->sync_jitter = {};
  if (!jitter.empty()) {
    fmt::print("\narrival jitter (each collective after the spacer mm on every rank):\n");
    fmt::print("{:>6} {:>12} {:>14} {:>16} {:>20}\n", "ranks", "spacer ms", "mean wait ms",
               "sigma ms", "variance us^2/us");
  }
  for (const calibration::CommJitterSample& j : jitter) {
    comm->sync_jitter.variance_per_us[j.group_size] = j.variance_per_us;
    fmt::print("{:>6} {:>12.3f} {:>14.3f} {:>16.3f} {:>20.1f}\n", j.group_size, j.spacer_us / 1e3,
               j.mean_wait_us / 1e3, std::sqrt(j.variance_per_us * j.spacer_us) / 1e3,
               j.variance_per_us);
  }
  models.setModel("comm", comm);
  models.save(args.out_dir);
  fmt::print("\ncomm sweep: {} samples in {:.1f} s over group sizes", samples.size(), seconds);
  for (int p : args.grid.group_sizes) fmt::print(" {}", p);
  fmt::print("; traces and replay reports in {}\nmodels:  {} (comm model added)\n", dir.string(),
             args.out_dir);
}

}  // namespace tracetwin::cli
