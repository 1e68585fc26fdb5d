#include "calibration/calibrator.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>

#include "calibration/host_probe.h"
#include "calibration/microbench.h"
#include "core/errors.h"
#include "core/op_family.h"
#include "predictors/model_set.h"
#include "replay/replayer.h"

namespace tracetwin::calibration {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::vector<const MicrobenchFamily*> resolveFamilies(const std::vector<std::string>& names) {
  std::vector<const MicrobenchFamily*> out;
  if (names.empty()) {
    for (const MicrobenchFamily& f : microbenchRegistry()) out.push_back(&f);
    return out;
  }
  for (const std::string& n : names) out.push_back(&microbenchFamily(n));  // UsageError if unknown
  return out;
}

GridOptions gridFor(const std::string& device) {
  GridOptions g;
  g.device = device == "cuda" ? "cuda:0" : device;
  if (device != "cpu") {
    g.dtypes = {core::DType::kFloat32, core::DType::kFloat16, core::DType::kBFloat16};
  }
  return g;
}

// Ops with the same name, schema and argument shapes are copies of one grid
// point's op: their medians are pooled into one sample.
std::string signature(const core::Node& n) {
  std::string key = n.op_schema_text;
  for (const core::Value& v : n.inputs) {
    key += '|' + v.type;
    core::forEachTensor(v, [&](const core::TensorValue& t) {
      for (int64_t d : t.shape) key += fmt::format(",{}", d);
    });
  }
  return key;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct CaseOutcome {
  std::vector<DatasetRow> rows;
  std::string failure;  // empty when every op ran
};

CaseOutcome runCase(const MicrobenchCase& c, const CalibrationOptions& o,
                    const std::string& device_name) {
  CaseOutcome out;
  const core::Graph graph = c.build();
  replay::ReplayOptions ro;
  ro.device = o.device;
  ro.threads = o.threads;
  ro.warmup_iters = 1;
  // ~2 ms of measured work per point, between 3 and 15 iterations.
  ro.measured_iters = std::clamp(static_cast<int>(std::ceil(2000.0 / std::max(c.est_us, 1.0))), 3, 15);
  ro.seed = o.seed;
  replay::ReplayResult r;
  try {
    r = replay::replayGraph(graph, ro);
  } catch (const UnavailableError&) {
    throw;  // no device / no LibTorch: nothing else can run either
  } catch (const Error& e) {
    out.failure = e.what();
    return out;
  }
  if (!r.failed.empty()) out.failure = fmt::format("{} failed: {}", r.failed[0].name, r.failed[0].reason);
  if (!r.skipped.empty() && out.failure.empty()) {
    out.failure = fmt::format("{} skipped: {}", r.skipped[0].name, r.skipped[0].reason);
  }
  const bool on_cpu = o.device == "cpu";
  std::map<std::string, std::pair<core::NodeId, std::vector<double>>> groups;
  for (const replay::OpMeasurement& m : r.per_op) {
    const core::Node* node = graph.findNode(m.id);
    if (node == nullptr) continue;
    auto& g = groups[signature(*node)];
    if (g.second.empty()) g.first = m.id;
    g.second.push_back(on_cpu ? m.cpu_us : m.device_us);
  }
  for (auto& [key, group] : groups) {
    DatasetRow row;
    row.case_label = c.label;
    row.sample.node = graph.node(group.first);
    row.sample.measured_us = median(group.second);
    row.sample.device = device_name;
    if (core::opFamily(row.sample.node) == "embedding_bag") row.sample.index_reuse = c.index_reuse;
    out.rows.push_back(std::move(row));
  }
  return out;
}

// Running estimate of wall seconds per grid point from its cost estimate.
class CostModel {
 public:
  double predictS(const MicrobenchCase& c, int iters) const {
    return kFixedS + ratio_ * c.est_us * 1e-6 * (iters + 1);
  }
  void observe(const MicrobenchCase& c, int iters, double wall_s) {
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

// Sweeps one family within `share_s` seconds; appends rows and failures.
FamilyRun sweepFamily(const MicrobenchFamily& fam, const CalibrationOptions& o,
                      const std::string& device_name, double share_s, Clock::time_point t0,
                      CostModel& cost, CalibrationResult& result) {
  FamilyRun run;
  run.family = fam.name;
  std::vector<MicrobenchCase> cases = fam.cases(gridFor(o.device));
  run.grid_points = static_cast<int64_t>(cases.size());
  std::mt19937_64 rng(o.seed ^ std::hash<std::string>{}(fam.name));
  std::shuffle(cases.begin(), cases.end(), rng);
  const Clock::time_point start = Clock::now();
  int consecutive_skips = 0;
  for (const MicrobenchCase& c : cases) {
    const double used = secondsSince(start);
    if (used >= share_s || consecutive_skips > 200) break;
    const int iters = std::clamp(static_cast<int>(std::ceil(2000.0 / std::max(c.est_us, 1.0))), 3, 15);
    if (used + cost.predictS(c, iters) > share_s) {
      ++consecutive_skips;  // too big for what is left; smaller points may fit
      continue;
    }
    consecutive_skips = 0;
    const Clock::time_point case_start = Clock::now();
    CaseOutcome outcome = runCase(c, o, device_name);
    cost.observe(c, iters, secondsSince(case_start));
    if (!outcome.failure.empty()) {
      ++run.failed;
      if (result.failures.size() < 20) result.failures.push_back(c.label + ": " + outcome.failure);
    }
    if (!outcome.rows.empty()) ++run.replayed;
    run.samples += static_cast<int64_t>(outcome.rows.size());
    for (DatasetRow& row : outcome.rows) result.rows.push_back(std::move(row));
    if (o.on_progress) {
      o.on_progress({fam.name, run.replayed + run.failed, run.grid_points, secondsSince(t0),
                     o.budget_s, c.label});
    }
  }
  run.seconds = secondsSince(start);
  return run;
}

void fitAndSave(const std::string& dir, const std::string& torch_version, CalibrationResult& res) {
  std::vector<predictors::MeasuredOp> samples;
  samples.reserve(res.rows.size());
  for (const DatasetRow& r : res.rows) samples.push_back(r.sample);
  predictors::FitOptions fo;
  fo.torch_version = torch_version;
  fo.replay_loop_us = res.replay_loop_us;
  predictors::ModelSet models;
  const Clock::time_point t0 = Clock::now();
  res.fit = predictors::fitModels(samples, res.device, fo, &models);
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

CalibrationResult runCalibration(const CalibrationOptions& o) {
  if (!(o.budget_s > 0) || !std::isfinite(o.budget_s)) {
    throw UsageError(fmt::format("--budget-s must be a positive number of seconds, got {}", o.budget_s));
  }
  if (o.out_dir.empty()) throw UsageError("calibrate needs an output directory (--out DIR)");
  const std::vector<const MicrobenchFamily*> families = resolveFamilies(o.families);
  if (!replay::replayAvailable()) {
    throw UnavailableError("calibration replays microbenchmarks, but this tracetwin was built "
                           "without LibTorch (configure with -DTRACETWIN_WITH_TORCH=ON)");
  }
  ensureDir(o.out_dir);
  const Clock::time_point t0 = Clock::now();
  CalibrationResult res;
  ProbeOptions po;
  po.device = o.device;
  po.threads = o.threads;
  const ProbeResult probe = probeDevice(po);  // UnavailableError when the device is absent
  res.device = probe.spec;
  res.replay_loop_us = probe.replay_loop_us;

  double weight_left = 0;
  for (const MicrobenchFamily* f : families) weight_left += f->budget_weight;
  CostModel cost;
  for (const MicrobenchFamily* f : families) {
    // Unused time of earlier families flows to the later ones.
    const double left = std::max(0.0, o.budget_s - secondsSince(t0));
    const double share = left * f->budget_weight / weight_left;
    weight_left -= f->budget_weight;
    res.families.push_back(sweepFamily(*f, o, res.device.name, share, t0, cost, res));
  }
  res.measure_seconds = secondsSince(t0);
  if (res.rows.empty()) {
    throw RuntimeFailure(fmt::format("calibration measured nothing in {:.0f} s{}", o.budget_s,
                                     res.failures.empty() ? "" : "; first failure: " + res.failures[0]));
  }
  res.dataset_path = o.out_dir + "/dataset.jsonl";
  res.device_path = o.out_dir + "/device.yaml";
  writeDataset(res.dataset_path, res.rows);
  predictors::saveDeviceSpec(res.device, res.device_path);
  fitAndSave(o.out_dir, o.torch_version, res);
  return res;
}

CalibrationResult refitFromDataset(const std::string& dir, const std::string& torch_version) {
  CalibrationResult res;
  res.dataset_path = dir + "/dataset.jsonl";
  res.device_path = dir + "/device.yaml";
  res.rows = readDataset(res.dataset_path);
  res.device = predictors::loadDeviceSpec(res.device_path);
  if (res.rows.empty()) throw InputError(fmt::format("{}: the dataset is empty", res.dataset_path));
  // The replay-loop cost is not in the dataset; keep the one the models had.
  try {
    const predictors::ModelSet old = predictors::ModelSet::load(dir);
    bool used_default = false;
    const double us = old.overheads.us(predictors::Overhead::kT1, predictors::kAllOps, &used_default);
    res.replay_loop_us = used_default ? 0.0 : us;
  } catch (const InputError&) {
    res.replay_loop_us = 0;  // no earlier models: fit without it
  }
  std::map<std::string, FamilyRun> per_family;
  for (const DatasetRow& r : res.rows) {
    FamilyRun& f = per_family[core::opFamily(r.sample.node)];
    f.family = core::opFamily(r.sample.node);
    ++f.samples;
  }
  for (auto& [name, run] : per_family) res.families.push_back(run);
  fitAndSave(dir, torch_version, res);
  return res;
}

}  // namespace tracetwin::calibration
