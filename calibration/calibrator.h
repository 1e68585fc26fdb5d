// Calibration: sweep microbenchmark grids within a time budget, replay each
// grid point (replay::replayGraph, the path `tracetwin replay` takes), turn
// the per-op medians into samples, measure the device, fit every family
// (predictors::fitModels) and save dataset, device spec and models to a
// directory.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "calibration/dataset.h"
#include "calibration/host_probe.h"
#include "calibration/host_speed_gauge.h"
#include "calibration/microbench.h"
#include "calibration/peak_rates.h"
#include "calibration/repeat_pooling.h"
#include "predictors/host/between_ops.h"
#include "predictors/host/code_cold.h"
#include "predictors/host/cold_tensors.h"
#include "predictors/host/host_costs.h"
#include "predictors/kernels/launch_counts.h"
#include "predictors/models/training.h"
#include "replay/replayer.h"

namespace tracetwin::calibration {

struct CalibrationProgress {
  std::string family;
  int64_t done = 0;      // grid-point runs done in this family
  int64_t total = 0;     // grid-point runs planned (small points run twice: alone, interleaved)
  double elapsed_s = 0;  // whole run so far
  double budget_s = 0;
  std::string label;  // grid point just finished
};

// What a calibration measures with: the replayer, the clock its budget is
// spent against, the device probe and the host-speed gauge. Empty members
// are the real ones. Tests set them all to get the same timings on any host
// (tests/support/toy_host.h): what a short calibration on a real, shared
// host fits varies from one 2-core machine to the next (issue 38: no view
// model, no cold-tensor term on another EPYC), so only scripts and
// benchmarks measure for real.
struct CalibrationSeams {
  std::function<replay::ReplayResult(const core::Graph&, const replay::ReplayOptions&)> replay;
  std::function<double()> clock_s;  // seconds, any origin
  std::function<ProbeResult(const ProbeOptions&)> probe_device;
  HostSpeedGauge::Reading gauge_reading;
  HostSpeedGauge::Sleep gauge_sleep;
};

struct CalibrationOptions {
  std::string out_dir;
  std::string device = "cpu";
  double budget_s = 180;              // measuring time; fitting comes on top
  std::vector<std::string> families;  // empty: every registered family
  int threads = 1;                    // intra-op threads of every replay
  // Each grid point that fits is measured this many times, in passes spread
  // over the run, and the per-op median kept. A shared host slows down by up
  // to 1.5x for seconds at a time (two back-to-back 20 s sweeps of the
  // reduction grid differed by 29% GMAE, a third one matched the first within
  // 9%): points measured once inherit whatever phase they fell in. The first
  // pass gets budget / repeats, so more repeats mean fewer points. The
  // `calibrate` command's default is 3.
  int repeats = 1;
  // How a point's repeats become its sample (repeat_pooling.h). Every
  // repeat is kept in the dataset, so `--refit` can pool another way.
  RepeatPooling pooling = RepeatPooling::kMedian;
  // CPU only: when > 1, each replay runs while a HostSpeedGauge reading is
  // within this factor of the host's fast phase, and runs again when the host
  // slowed during it (steady_host_gate.h). 0: measure whatever the host does.
  // Off by default: where the gauge's reference loop slows with a neighbour
  // that hardly slows the ops (an earlier development host), gating at 1.25
  // spent 45 of 60 s waiting and did not lower the repeat GMAE; where whole
  // passes run ~1.5x (the Zen 5 VM, session 59) a full calibration gated at
  // 1.25 waited 117 of 1,200 s and cut it 2-8x (docs/calibration.md).
  double host_tolerance = 0;
  // When set, only grid points whose label this (ECMAScript) regular
  // expression finds, e.g. "hardswish|nll": new ops measured for a dataset
  // that lacks them.
  std::string case_filter;
  // The grids' floating dtypes; empty: the device's (grid_selection.h).
  std::vector<core::DType> dtypes;
  uint64_t seed = 1234;        // grid sampling order
  std::string torch_version;   // recorded in the ModelSet manifest
  // The host allocator the process measures under (cli/host_malloc.h), as
  // its report names it; recorded in device.yaml's sources when set.
  std::string host_malloc;
  predictors::FitOptions fit;  // XGBoost size, hold-out (predictors' defaults)
  std::function<void(const CalibrationProgress&)> on_progress;
  // Seam for tests: adjusts the options of every microbenchmark replay (a
  // fake kernel collector stands in for CUPTI on a host without a GPU).
  std::function<void(replay::ReplayOptions&)> adjust_replay;
  // Unset: each unit refills its inputs as its cases ask
  // (MicrobenchCase::refill). Set: every unit the same way (`calibrate
  // --unit-refill all|settle|indices`: the same points measured each way, to
  // see what the refill does to them).
  std::optional<UnitRefill> unit_refill;
  CalibrationSeams seams;
  // On a device that times kernels, measure the host side (per-op host time,
  // the loop around the calls) in a second replay of each point without the
  // kernel collector, whose per-launch cost it would otherwise carry.
  bool host_pass_without_collector = true;
  // The core's private cache (DeviceSpec::privateCacheBytes), for the reuse
  // distances of the rows (predictors/host/reuse_distance.h); runCalibration sets
  // it from its host probe.
  double private_cache_bytes = 0;
};

struct FamilyRun {
  std::string family;
  int64_t grid_points = 0;    // offered by the grid
  int64_t replayed = 0;       // grid-point runs that replayed (small points run twice)
  int64_t failed = 0;         // replay threw or an op failed
  int64_t samples = 0;        // after pooling the repeats
  int64_t repeated_runs = 0;  // extra measurements of points already measured
  // The noise floor: geometric mean of |a - b| / b over the first two
  // measurements of each repeated point (0 when nothing was repeated).
  double repeat_gmae = 0;
  int64_t host_reruns = 0;  // replays run again because the host slowed
  double seconds = 0;
};

// What the host-speed gauge read and the steady-host gate did over the
// whole run (CPU only).
struct HostGateSummary {
  bool gauged = false;                           // the gauge was read around every replay
  bool gating = false;                           // and replays waited for / re-ran on a steady host
  double tolerance = 0;                          // gating: CalibrationOptions::host_tolerance
  double baseline_us = 0;                        // the gauge's fast-phase reading
  double median_slowdown = 0, p90_slowdown = 0;  // over the replays kept
  int64_t units = 0;                             // replays kept
  int64_t steady = 0;  // of them, measured with the host steady (gating only)
  int64_t reruns = 0;
  double waited_s = 0;
};

struct CalibrationResult {
  std::vector<FamilyRun> families;
  std::vector<std::string> failures;  // "<case>: <reason>" (first 20)
  std::vector<DatasetRow> rows;
  // Iteration (GPU: the host loop) minus the ops' own host times of every
  // replayed graph, and the fit of it (predictors/host/between_ops.h).
  std::vector<predictors::BetweenOpsSample> between_ops;
  predictors::BetweenOpsFit between_fit;
  // GPU: the host time of each op's call, per op name, from the rows'
  // host_us (predictors/host/host_costs.h); empty on a CPU.
  predictors::HostCostFit host_costs;
  // GPU: the launch-count trees' hold-out scores (predictors/kernels/launch_counts.h).
  std::vector<predictors::LaunchCountScore> launch_scores;
  predictors::OverheadTable kept_overheads;  // refit: the earlier models' table
  // CPU: what small ops cost more when time passed since their previous call,
  // from the cold units (empty when none paired); a refit of a dataset
  // without cold rows keeps the earlier models' (kept_code_cold).
  predictors::CodeColdModel code_cold, kept_code_cold;
  // CPU: what small ops cost more per input tensor that went cold, from the
  // evicted units; kept from the earlier models likewise.
  predictors::ColdTensorModel cold_tensors, kept_cold_tensors;
  // refit: the earlier set's comm model (the comm sweep's, not in the dataset).
  std::shared_ptr<const predictors::KernelModel> kept_comm;
  predictors::DeviceSpec device;
  // The peak rates probed again after the measurements (runCalibration only).
  std::optional<PeakRatesRecheck> peak_recheck;
  HostGateSummary host_gate;
  double replay_loop_us = 0;
  predictors::FitReport fit;
  double measure_seconds = 0;
  double fit_seconds = 0;
  std::string dataset_path, device_path;
  RepeatPooling pooling = RepeatPooling::kMedian;
};

// LibTorch version this tracetwin was built against ("1.13.1"); empty when
// built without LibTorch.
std::string libtorchVersion();

// Runs the sweep, writes DIR/dataset.jsonl, DIR/device.yaml and the ModelSet.
// Throws UsageError (unknown family, bad budget), UnavailableError (no
// LibTorch, device absent), InputError (cannot write DIR).
CalibrationResult runCalibration(const CalibrationOptions& options);

// Fits models from an existing DIR/dataset.jsonl and DIR/device.yaml and
// saves them to DIR again (no measuring). Rows with repeats are pooled again
// with `pooling`.
CalibrationResult refitFromDataset(const std::string& dir, const std::string& torch_version,
                                   const predictors::FitOptions& fit = {},
                                   RepeatPooling pooling = RepeatPooling::kMedian);

}  // namespace tracetwin::calibration
