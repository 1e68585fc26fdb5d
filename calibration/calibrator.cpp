#include "calibration/calibrator.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "calibration/cold_units.h"
#include "calibration/evicted_units.h"
#include "calibration/family_sweep.h"
#include "calibration/gpu_host_rows.h"
#include "calibration/grid_selection.h"
#include "calibration/host_probe.h"
#include "calibration/host_speed_gauge.h"
#include "calibration/microbench.h"
#include "calibration/peak_rates.h"
#include "calibration/replay_unit.h"
#include "calibration/spaced_units.h"
#include "calibration/steady_host_gate.h"
#include "core/errors.h"
#include "core/op_family.h"
#include "core/statistics.h"
#include "predictors/host/between_ops.h"
#include "predictors/models/model_set.h"
#include "replay/replayer.h"

namespace tracetwin::calibration {
namespace {

// One row per (case, op, alone or interleaved): its repeats pooled.
// Node ids are the same in every repeat (the unit graphs are deterministic).
// With the steady-host gate on (tolerance > 1), a row measured on a steady
// host at least once keeps only those measurements. `repeat_gmae` gets, per
// family, the GMAE between the first two measurements kept of each row.
std::vector<DatasetRow> poolRepeats(std::vector<DatasetRow> rows, double tolerance,
                                    RepeatPooling pooling,
                                    std::map<std::string, double>* repeat_gmae) {
  std::map<std::tuple<std::string, bool, core::NodeId>, size_t> first;
  std::vector<std::vector<std::pair<double, double>>> runs;  // (measured us, slowdown)
  std::vector<std::vector<double>> host_runs;                // GPU: host us of each run
  std::vector<DatasetRow> pooled;
  for (DatasetRow& r : rows) {
    auto key = std::make_tuple(r.case_label, r.sample.repeated, r.sample.node.id);
    auto [it, inserted] = first.emplace(key, pooled.size());
    const double host_us = r.host_us;
    if (inserted) {
      runs.push_back({{r.sample.measured_us, r.host_slowdown}});
      host_runs.emplace_back();
      pooled.push_back(std::move(r));
    } else {
      runs[it->second].emplace_back(r.sample.measured_us, r.host_slowdown);
    }
    if (host_us > 0) host_runs[it->second].push_back(host_us);
  }
  auto steady = [&](const std::pair<double, double>& m) {
    return tolerance <= 1 || m.second <= tolerance;
  };
  std::map<std::string, std::pair<double, int64_t>> log_sums;
  for (size_t i = 0; i < pooled.size(); ++i) {
    const bool any_steady = std::any_of(runs[i].begin(), runs[i].end(), steady);
    std::vector<double> t;
    double slowdown = 0;
    for (const auto& m : runs[i]) {
      if (any_steady && !steady(m)) continue;
      t.push_back(m.first);
      slowdown = std::max(slowdown, m.second);
    }
    if (t.size() >= 2 && t[1] > 0) {
      auto& [sum, n] = log_sums[core::opFamily(pooled[i].sample.node)];
      sum += std::log(std::max(std::abs(t[0] - t[1]) / t[1], 1e-6));
      ++n;
    }
    pooled[i].sample.measured_us = pooledUs(t, pooling);
    if (!host_runs[i].empty()) pooled[i].host_us = core::median(host_runs[i]);
    if (t.size() >= 2) pooled[i].repeats_us = t;
    pooled[i].host_slowdown = slowdown;
  }
  for (const auto& [family, s] : log_sums)
    (*repeat_gmae)[family] = std::exp(s.first / static_cast<double>(s.second));
  return pooled;
}

void fitAndSave(const std::string& dir, const std::string& torch_version, predictors::FitOptions fo,
                CalibrationResult& res) {
  // Cold and evicted rows only measure the code-cold and cold-tensor terms;
  // the kernel models learn from the rest.
  std::vector<predictors::MeasuredOp> samples;
  samples.reserve(res.rows.size());
  for (const DatasetRow& r : res.rows) {
    if (!isColdRow(r) && !isEvictedRow(r)) samples.push_back(r.sample);
  }
  fo.torch_version = torch_version;
  // The between-op cost fitted over the sweep's graphs supersedes the probe's
  // loop-only figure; a refit has no graphs and keeps the earlier models'.
  res.between_fit = predictors::fitBetweenOps(res.between_ops);
  fo.replay_loop_us = res.between_fit.ok ? 0.0 : res.replay_loop_us;
  predictors::ModelSet models;
  const Clock::time_point t0 = Clock::now();
  res.fit = predictors::fitModels(samples, res.device, fo, &models);
  if (res.between_fit.ok) {
    predictors::applyBetweenOps(res.between_fit, &models.overheads);
  } else if (!res.kept_overheads.empty()) {
    models.overheads = res.kept_overheads;
  }
  // GPU rows carry their host times, so a refit fits these again.
  res.host_costs = predictors::fitHostCosts(hostCostSamples(res.rows));
  predictors::applyHostCosts(res.host_costs, &models.overheads);
  res.launch_scores.clear();
  models.launch_counts = predictors::LaunchCountModel::fit(
      launchSamples(res.rows), predictors::LaunchCountModel::treeParams(fo.seed),
      &res.launch_scores);
  res.code_cold = predictors::fitCodeCold(coldPairs(res.rows));
  if (res.code_cold.empty()) res.code_cold = res.kept_code_cold;  // a dataset without cold rows
  models.code_cold = res.code_cold;
  res.cold_tensors =
      predictors::fitColdTensors(evictedPairs(res.rows), res.device.memory_bandwidth);
  if (res.cold_tensors.empty()) res.cold_tensors = res.kept_cold_tensors;
  models.cold_tensors = res.cold_tensors;
  if (res.kept_comm != nullptr && models.model("comm") == nullptr)
    models.setModel("comm", res.kept_comm);
  res.fit_seconds = secondsSince(t0);
  models.device = res.device;
  models.torch_version = torch_version;
  models.save(dir);
}

void ensureDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    throw InputError(fmt::format("{}: cannot create the output directory: {}", dir, ec.message()));
  }
}

}  // namespace

std::string libtorchVersion() {
#ifdef TRACETWIN_TORCH_VERSION
  return TRACETWIN_TORCH_VERSION;
#else
  return "";
#endif
}

CalibrationResult runCalibration(const CalibrationOptions& options) {
  CalibrationOptions o = options;
  if (!(o.budget_s > 0) || !std::isfinite(o.budget_s)) {
    throw UsageError(
        fmt::format("--budget-s must be a positive number of seconds, got {}", o.budget_s));
  }
  if (o.repeats < 1 || o.repeats > 20) {
    throw UsageError(fmt::format("--repeats must be between 1 and 20, got {}", o.repeats));
  }
  if (!(o.host_tolerance == 0 || (o.host_tolerance > 1 && o.host_tolerance <= 10))) {
    throw UsageError(
        fmt::format("--host-tolerance must be 0 (off) or a factor above 1 and at most 10, got {}",
                    o.host_tolerance));
  }
  if (o.out_dir.empty()) throw UsageError("calibrate needs an output directory (--out DIR)");
  const std::vector<const MicrobenchFamily*> families = resolveFamilies(o.families);
  checkCaseFilter(families, gridFor(o.device, o.dtypes), o.case_filter);
  if (!o.seams.replay && !replay::replayAvailable()) {
    throw UnavailableError(
        "calibration replays microbenchmarks, but this tracetwin was built "
        "without LibTorch (configure with -DTRACETWIN_WITH_TORCH=ON)");
  }
  ensureDir(o.out_dir);
  CalibrationResult res;
  ProbeOptions po;
  po.device = o.device;
  po.threads = o.threads;
  if (o.device != "cpu") {
    // A 512^3 mm keeps an H100 busy for ~10 us and read 20.9 TFLOP/s float32,
    // two fifths of the 51.6 an 8192^3 one does; 512 MiB is ten times its L2.
    po.mm_size = 8192;
    po.copy_bytes = int64_t{512} << 20;
  }
  // UnavailableError when the device is absent.
  const ProbeResult probe = o.seams.probe_device ? o.seams.probe_device(po) : probeDevice(po);
  res.device = probe.spec;
  if (!o.host_malloc.empty())
    res.device.sources.push_back("replays under the " + o.host_malloc + " host allocator");
  res.replay_loop_us = probe.replay_loop_us;
  o.private_cache_bytes = static_cast<double>(res.device.privateCacheBytes());
  // The budget is the microbenchmarks': the device probes (a few seconds,
  // the reuse probe's two among them) come on top, as the fit does.
  const BudgetClock clock(o.seams.clock_s);
  const double t0 = clock.now();

  std::vector<FamilySweep> sweeps;
  const int64_t evict_bytes = evictBytes(res.device.lastLevelCacheBytes());
  for (const MicrobenchFamily* f : families) sweeps.push_back(startSweep(*f, o, evict_bytes));
  CostModel cost;
  UnitMeasurer measure(o, res.device.name);
  // Small grids finish early; later passes give their time to the big ones
  // (GEMM, conv, embedding) until the budget or every grid is used up.
  constexpr int kMaxPasses = 4;
  CalibrationOptions first_pass = o;
  first_pass.budget_s = o.budget_s / std::max(o.repeats, 1);
  for (int pass = 0; pass < kMaxPasses && clock.since(t0) < 0.97 * first_pass.budget_s; ++pass) {
    sweepPass(sweeps, first_pass, measure, clock, t0, cost, res);
  }
  repeatPasses(sweeps, o, measure, clock, t0, res);
  res.host_gate = measure.summary();
  // The peak rates once more, now that the measurements are done, the faster
  // of each kept: a probe takes half a second, and a host slowed for those
  // seconds at the start once lowered every analytic time after it
  // (peak_rates.h).
  res.peak_recheck = keepFasterPeakRates(
      res.device, o.seams.probe_device ? o.seams.probe_device(po).spec : probePeakRates(po));
  std::map<std::string, double> repeat_gmae;
  res.pooling = o.pooling;
  res.rows = poolRepeats(std::move(res.rows), res.host_gate.tolerance, o.pooling, &repeat_gmae);
  std::map<std::string, int64_t> samples;
  for (const DatasetRow& r : res.rows) ++samples[core::opFamily(r.sample.node)];
  for (FamilySweep& s : sweeps) {
    s.run.samples = samples[s.family->name];
    s.run.repeat_gmae = repeat_gmae[s.family->name];
    res.families.push_back(s.run);
  }
  res.measure_seconds = clock.since(t0);
  if (res.rows.empty()) {
    throw RuntimeFailure(
        fmt::format("calibration measured nothing in {:.0f} s{}", o.budget_s,
                    res.failures.empty() ? "" : "; first failure: " + res.failures[0]));
  }
  res.dataset_path = o.out_dir + "/dataset.jsonl";
  res.device_path = o.out_dir + "/device.yaml";
  writeDataset(res.dataset_path, res.rows);
  predictors::saveDeviceSpec(res.device, res.device_path);
  fitAndSave(o.out_dir, o.torch_version, o.fit, res);
  return res;
}

CalibrationResult refitFromDataset(const std::string& dir, const std::string& torch_version,
                                   const predictors::FitOptions& fit, RepeatPooling pooling) {
  CalibrationResult res;
  res.dataset_path = dir + "/dataset.jsonl";
  res.device_path = dir + "/device.yaml";
  res.rows = readDataset(res.dataset_path);
  res.pooling = pooling;
  for (DatasetRow& r : res.rows) {
    if (!r.repeats_us.empty()) r.sample.measured_us = pooledUs(r.repeats_us, pooling);
  }
  res.device = predictors::loadDeviceSpec(res.device_path);
  if (res.rows.empty()) throw InputError(fmt::format("{}: the dataset is empty", res.dataset_path));
  // The between-op costs are not in the dataset, nor is the comm model; keep
  // the ones the models had.
  // Read from the manifest alone: a refit follows a change of features or a
  // copy of the dataset, where the old kernel models are stale or missing
  // (loading them whole, a missing booster file silently dropped the costs).
  // Without a manifest there is nothing to keep: loadStepCosts refuses.
  const predictors::ModelSet earlier = predictors::ModelSet::loadStepCosts(dir);
  res.kept_overheads = earlier.overheads;
  res.kept_code_cold = earlier.code_cold;
  res.kept_cold_tensors = earlier.cold_tensors;
  res.kept_comm = earlier.sharedModel("comm");
  std::map<std::string, FamilyRun> per_family;
  for (const DatasetRow& r : res.rows) {
    FamilyRun& f = per_family[core::opFamily(r.sample.node)];
    f.family = core::opFamily(r.sample.node);
    ++f.samples;
  }
  for (auto& [name, run] : per_family) res.families.push_back(run);
  // The rows were measured with the LibTorch the manifest names: a GPU's
  // dataset refitted on a CPU-only host stays PyTorch 2.11's, not this build's.
  fitAndSave(dir, earlier.torch_version.empty() ? torch_version : earlier.torch_version, fit, res);
  return res;
}

}  // namespace tracetwin::calibration
