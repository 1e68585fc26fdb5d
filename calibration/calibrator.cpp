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
#include "calibration/gpu_host_rows.h"
#include "calibration/grid_selection.h"
#include "calibration/host_probe.h"
#include "calibration/host_speed_gauge.h"
#include "calibration/microbench.h"
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

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The clock the budget is spent against: the steady clock, or a test's
// (CalibrationSeams::clock_s).
class BudgetClock {
 public:
  explicit BudgetClock(std::function<double()> now_s) : now_s_(std::move(now_s)) {
    if (!now_s_) {
      const Clock::time_point origin = Clock::now();
      now_s_ = [origin] { return secondsSince(origin); };
    }
  }
  double now() const { return now_s_(); }
  double since(double t0) const { return now_s_() - t0; }

 private:
  std::function<double()> now_s_;
};

// Running estimate of wall seconds per grid point from its cost estimate.
class CostModel {
 public:
  double predictS(const ReplayUnit& c, int iters) const {
    return kFixedS + ratio_ * c.est_us * 1e-6 * (iters + 1);
  }
  void observe(const ReplayUnit& c, int iters, double wall_s) {
    const double base = c.est_us * 1e-6 * (iters + 1);
    if (base <= 0) return;
    const double r = std::clamp((wall_s - kFixedS) / base, 0.05, 50.0);
    log_ratio_ = 0.7 * log_ratio_ + 0.3 * std::log(r);  // EMA in log space
    ratio_ = std::exp(log_ratio_);
  }

 private:
  static constexpr double kFixedS = 0.003;  // graph build + tensor materialisation
  double log_ratio_ = 0;
  double ratio_ = 1;
};

// Replays a unit, through the steady-host gate when there is one.
class UnitMeasurer {
 public:
  // On a CPU the gauge is always read around each replay (the dataset
  // records the slowdown); it gates only with a tolerance above 1.
  UnitMeasurer(const CalibrationOptions& o, std::string device_name)
      : device_name_(std::move(device_name)) {
    if (o.device != "cpu") return;
    if (o.seams.gauge_reading) {
      gauge_.emplace(o.seams.gauge_reading, o.seams.gauge_sleep);
    } else {
      gauge_.emplace();
    }
    SteadyHostOptions so;
    if (o.host_tolerance > 1) tolerance_ = o.host_tolerance;
    so.tolerance = tolerance_ > 0 ? tolerance_ : std::numeric_limits<double>::infinity();
    gate_.emplace(*gauge_, so);
  }
  // `o` may differ from the constructor's in budget only.
  CaseOutcome operator()(const ReplayUnit& u, const CalibrationOptions& o, int64_t* reruns) {
    if (!gate_) return runCase(u, o, device_name_);
    const int64_t before = gate_->stats().reruns;
    CaseOutcome out = gate_->run([&] { return runCase(u, o, device_name_); });
    *reruns += gate_->stats().reruns - before;
    return out;
  }
  HostGateSummary summary() const {
    HostGateSummary h;
    if (!gate_) return h;
    const SteadyHostStats& s = gate_->stats();
    h.gauged = true;
    h.gating = tolerance_ > 0;
    h.tolerance = tolerance_;
    h.baseline_us = gauge_->baselineUs();
    h.units = s.units;
    h.steady = s.steady;
    h.reruns = s.reruns;
    h.waited_s = s.waited_s;
    if (!s.slowdowns.empty()) {
      std::vector<double> v = s.slowdowns;
      std::sort(v.begin(), v.end());
      h.median_slowdown = v[v.size() / 2];
      h.p90_slowdown = v[v.size() * 9 / 10];
    }
    return h;
  }

 private:
  std::string device_name_;
  double tolerance_ = 0;  // gating; 0 when only gauging (or not on a CPU)
  std::optional<HostSpeedGauge> gauge_;
  std::optional<SteadyHostGate> gate_;
};

// One family's sweep: its grid in sampling order and how far it got, so a
// second pass can go on where the first stopped.
struct FamilySweep {
  const MicrobenchFamily* family = nullptr;
  std::vector<ReplayUnit> cases;
  size_t next = 0;
  int64_t case_runs = 0;             // grid points summed over units (small ones run twice)
  std::vector<ReplayUnit> measured;  // units that ran without failure, for the repeats
  FamilyRun run;
  bool exhausted() const { return next >= cases.size(); }
};

// `evict_bytes`: the stream of the family's evicted unit (CPU).
FamilySweep startSweep(const MicrobenchFamily& fam, const CalibrationOptions& o,
                       int64_t evict_bytes) {
  FamilySweep s;
  s.family = &fam;
  std::vector<MicrobenchCase> cases = gridCases(fam, o.device, o.case_filter);
  const size_t grid_points = cases.size();
  orderForSweep(cases, o.seed ^ std::hash<std::string>{}(fam.name));
  // Units in sampling order; a group of small cases takes the place of the
  // case that filled it.
  // CPU: the first kColdGroups full groups are followed by their cold and
  // evicted copies, so both sides of each pair are measured moments apart.
  const int cold_groups = o.device == "cpu" ? kColdGroups : 0;
  int cold_made = 0;
  ReplayUnit pending;
  for (MicrobenchCase& c : cases) {
    const double est = c.est_us;
    s.cases.push_back({{c}, est});  // on its own, among copies of itself
    if (!interleavable(c)) continue;
    pending.est_us += c.copy_us * kRounds;
    pending.cases.push_back(std::move(c));
    if (pending.cases.size() == kGroupCases) {
      s.cases.push_back(std::move(pending));
      pending = {};
      if (cold_made < cold_groups) {
        const ReplayUnit group = s.cases.back();
        // The evicted unit first: one unit, where the cold ones are four;
        // a sweep cut short (a budget of seconds on a loaded host) then
        // still measures both kinds.
        s.cases.push_back(evictedUnit(group, evict_bytes));
        for (int64_t n : kBusySpacerSizes) {
          for (bool rewarm : {false, true}) s.cases.push_back(coldUnit(group, n, rewarm));
        }
        ++cold_made;
      }
    }
  }
  if (pending.cases.size() > 1) s.cases.push_back(std::move(pending));
  // CPU memory-bound families: the spaced units after the grid. Each streams
  // up to 128 MiB per round (~0.2 s a unit, 84 units for elementwise); placed
  // early, they took most of an 8 s two-family calibration, and under a
  // loaded host the other family measured nothing. A grid point is what the
  // kernel models need first; the distances refine them.
  if (o.device == "cpu" && spacedFamily(fam.name)) {
    std::vector<ReplayUnit> spaced = spacedUnits(gridCases(fam, o.device, o.case_filter));
    s.cases.insert(s.cases.end(), std::make_move_iterator(spaced.begin()),
                   std::make_move_iterator(spaced.end()));
  }
  for (const ReplayUnit& u : s.cases) s.case_runs += static_cast<int64_t>(u.cases.size());
  s.run.family = fam.name;
  s.run.grid_points = static_cast<int64_t>(grid_points);
  return s;
}

// Sweeps on within `share_s` seconds; appends rows and failures. Points too
// big for what is left are passed over (smaller ones may still fit) and stay
// for a later pass.
void continueSweep(FamilySweep& s, const CalibrationOptions& o, UnitMeasurer& measure,
                   double share_s, const BudgetClock& clock, double t0, CostModel& cost,
                   CalibrationResult& result) {
  const double start = clock.now();
  std::vector<ReplayUnit> passed_over;
  int consecutive_skips = 0;
  for (; s.next < s.cases.size(); ++s.next) {
    const ReplayUnit& c = s.cases[s.next];
    const double used = clock.since(start);
    if (used >= share_s || consecutive_skips > 200) break;
    const int iters = itersFor(c.est_us);
    if (used + cost.predictS(c, iters) > share_s) {
      ++consecutive_skips;
      passed_over.push_back(c);
      continue;
    }
    consecutive_skips = 0;
    const double case_start = clock.now();
    CaseOutcome outcome = measure(c, o, &s.run.host_reruns);
    cost.observe(c, iters, clock.since(case_start));
    FamilyRun& run = s.run;
    const int64_t points = static_cast<int64_t>(c.cases.size());
    if (!outcome.failure.empty()) {
      ++run.failed;
      if (result.failures.size() < 20) {
        result.failures.push_back(c.cases[0].label + (points > 1 ? " (+ group)" : "") + ": " +
                                  outcome.failure);
      }
    }
    if (!outcome.rows.empty()) run.replayed += outcome.failure.empty() ? points : points - 1;
    if (outcome.failure.empty() && !outcome.rows.empty()) s.measured.push_back(c);
    if (outcome.between) result.between_ops.push_back(*outcome.between);
    for (DatasetRow& row : outcome.rows) result.rows.push_back(std::move(row));
    if (o.on_progress) {
      o.on_progress({s.family->name, run.replayed + run.failed, s.case_runs, clock.since(t0),
                     o.budget_s, c.cases.back().label});
    }
  }
  // Passed-over points go back in front of the unvisited ones.
  s.cases.erase(s.cases.begin(), s.cases.begin() + static_cast<std::ptrdiff_t>(s.next));
  s.cases.insert(s.cases.begin(), passed_over.begin(), passed_over.end());
  s.next = 0;
  s.run.seconds += clock.since(start);
}

// Splits what is left of the budget between the sweeps not yet exhausted, by
// weight, in registry order; unused time flows to the later ones.
void sweepPass(std::vector<FamilySweep>& sweeps, const CalibrationOptions& o, UnitMeasurer& measure,
               const BudgetClock& clock, double t0, CostModel& cost, CalibrationResult& result) {
  double weight_left = 0;
  for (const FamilySweep& s : sweeps) weight_left += s.exhausted() ? 0 : s.family->budget_weight;
  for (FamilySweep& s : sweeps) {
    if (s.exhausted()) continue;
    const double left = std::max(0.0, o.budget_s - clock.since(t0));
    const double share = left * s.family->budget_weight / weight_left;
    weight_left -= s.family->budget_weight;
    continueSweep(s, o, measure, share, clock, t0, cost, result);
  }
}

// Measures the points of the first pass again, `o.repeats - 1` times, while
// the budget lasts. Each repeat walks every family once, so the measurements
// of one point lie a whole pass apart.
void repeatPasses(std::vector<FamilySweep>& sweeps, const CalibrationOptions& o,
                  UnitMeasurer& measure, const BudgetClock& clock, double t0,
                  CalibrationResult& result) {
  for (int r = 1; r < o.repeats; ++r) {
    for (FamilySweep& s : sweeps) {
      const double start = clock.now();
      for (const ReplayUnit& u : s.measured) {
        if (clock.since(t0) >= o.budget_s) return;
        CaseOutcome outcome = measure(u, o, &s.run.host_reruns);
        if (!outcome.failure.empty()) continue;  // the first pass's figures stand
        s.run.repeated_runs += static_cast<int64_t>(u.cases.size());
        if (outcome.between) result.between_ops.push_back(*outcome.between);
        for (DatasetRow& row : outcome.rows) result.rows.push_back(std::move(row));
        if (o.on_progress) {
          o.on_progress({s.family->name, s.run.replayed + s.run.failed, s.case_runs,
                         clock.since(t0), o.budget_s,
                         fmt::format("repeat {}: {}", r + 1, u.cases.back().label)});
        }
      }
      s.run.seconds += clock.since(start);
    }
  }
}

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
  checkCaseFilter(families, o.device, o.case_filter);
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
  // The between-op costs are not in the dataset; keep the ones the models had.
  // Read from the manifest alone: a refit follows a change of features or a
  // copy of the dataset, where the old kernel models are stale or missing
  // (loading them whole, a missing booster file silently dropped the costs).
  // Without a manifest there is nothing to keep: loadStepCosts refuses.
  const predictors::ModelSet earlier = predictors::ModelSet::loadStepCosts(dir);
  res.kept_overheads = earlier.overheads;
  res.kept_code_cold = earlier.code_cold;
  res.kept_cold_tensors = earlier.cold_tensors;
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
