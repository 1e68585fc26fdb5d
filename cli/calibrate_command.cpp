// `tracetwin calibrate --out DIR [--device cpu|cuda] [--budget-s N]
//  [--families a,b] [--threads N] [--refit]`: sweeps microbenchmark grids
// through replay within the budget, measures the device, fits one model per
// op family and saves dataset.jsonl, device.yaml and the ModelSet to DIR.
#include <fmt/core.h>
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "calibration/calibrator.h"
#include "calibration/grid_selection.h"
#include "calibration/microbench.h"
#include "cli/calibrate_comm.h"
#include "cli/calibrate_sparse_add.h"
#include "cli/command_registry.h"
#include "cli/fit_report.h"
#include "cli/host_malloc.h"
#include "cli/number_checks.h"
#include "cli/replay_commands.h"
#include "cli/stop_request.h"
#include "core/errors.h"

namespace tracetwin::cli {
namespace {

struct CalibrateArgs {
  calibration::CalibrationOptions options;
  bool refit = false;
  HostMalloc malloc_mode = HostMalloc::kCaching;  // cli/host_malloc.h: measured in mapped memory
  CommCalibrationArgs comm;  // --families comm
  SparseAddCalibrationArgs sparse_add;  // --families sparse_add
  std::string unit_refill;              // --unit-refill; empty: each family's own
  std::vector<std::string> dtypes;      // --dtypes; empty: the device's
  // The --comm-* and --sparse-add-* options given: read by their family only.
  std::vector<std::string> comm_options;
  std::vector<std::string> sparse_add_options;
};

// Throws UsageError when `given` holds options of a family --families does not ask for.
void requireFamilyFor(const std::vector<std::string>& given, bool asked, const char* family) {
  if (given.empty() || asked) return;
  throw UsageError(fmt::format("{} {} read by --families {} only: add {} to --families, or drop {}",
                               fmt::join(given, ", "), given.size() == 1 ? "is" : "are", family,
                               family, given.size() == 1 ? "it" : "them"));
}

// One status line, rewritten in place on a terminal; on a pipe or file one
// line per family plus one every 25 points, so logs stay short.
class ProgressPrinter {
 public:
  ProgressPrinter() : tty_(isatty(fileno(stderr)) != 0) {}
  ~ProgressPrinter() {
    if (tty_ && printed_) std::fputc('\n', stderr);
  }
  ProgressPrinter(const ProgressPrinter&) = delete;
  ProgressPrinter& operator=(const ProgressPrinter&) = delete;

  void operator()(const calibration::CalibrationProgress& p) {
    const std::string line =
        fmt::format("[{:<13}] {:>4} / {:<5} points  {:6.1f} / {:.0f} s  {}", p.family, p.done,
                    p.total, p.elapsed_s, p.budget_s, p.label);
    printed_ = true;
    if (tty_) {
      fmt::print(stderr, "\r{:<110.110}", line);
      std::fflush(stderr);
    } else if (p.family != family_ || p.done % 25 == 0) {
      fmt::print(stderr, "{}\n", line);
    }
    family_ = p.family;
  }

 private:
  bool tty_;
  bool printed_ = false;
  std::string family_;
};

void printDevice(const predictors::DeviceSpec& d, double loop_us) {
  fmt::print("device {} ({}):", d.name, predictors::deviceKindName(d.kind));
  for (const auto& [dtype, flops] : d.peak_flops)
    fmt::print(" {} {:.2f} GFLOP/s,", dtype, flops / 1e9);
  fmt::print(" memory {:.1f} GB/s, {} cores", d.memory_bandwidth / 1e9, d.compute_units);
  if (loop_us > 0) fmt::print(", replay loop {:.2f} us/op", loop_us);
  fmt::print("\n");
}

void printReport(const calibration::CalibrationResult& r) {
  printDevice(r.device, r.replay_loop_us);
  if (r.peak_recheck) fmt::print("{}\n", calibration::describePeakRecheck(*r.peak_recheck));
  if (r.measure_seconds > 0) {
    fmt::print("\n{:<14} {:>11} {:>9} {:>7} {:>8} {:>13} {:>12} {:>8} {:>8}\n", "microbench",
               "grid points", "replayed", "failed", "repeats", "repeat GMAE", "slow reruns",
               "samples", "seconds");
    for (const auto& f : r.families) {
      fmt::print("{:<14} {:>11} {:>9} {:>7} {:>8} {:>12.1f}% {:>12} {:>8} {:>8.1f}\n", f.family,
                 f.grid_points, f.replayed, f.failed, f.repeated_runs, 100.0 * f.repeat_gmae,
                 f.host_reruns, f.samples, f.seconds);
    }
  }
  const calibration::HostGateSummary& g = r.host_gate;
  if (g.gating) {
    fmt::print(
        "steady host: {} of {} replays measured within {:.2f}x of the host's fast phase (gauge "
        "{:.1f} us); {} replays run again after the host slowed; {:.1f} s spent waiting\n",
        g.steady, g.units, g.tolerance, g.baseline_us, g.reruns, g.waited_s);
  }
  if (g.gauged) {
    fmt::print(
        "host speed during the replays: gauge slowdown median {:.2f}x, p90 {:.2f}x of its fast "
        "phase ({:.1f} us){}\n",
        g.median_slowdown, g.p90_slowdown, g.baseline_us,
        g.gating ? "" : "; not gating (--host-tolerance)");
  }
  for (const std::string& f : r.failures) fmt::print("  failed: {}\n", f);
  printFitReport(r.fit);
  if (r.between_fit.ok) {
    fmt::print(
        "between ops (replay loop, frees, timing skew): {:.3f} us per op + {:.3f} us per "
        "produced tensor + {:.2f}% of op time + {:.3f} us per wrapped number, fitted over {} "
        "replayed graphs\n",
        r.between_fit.per_op_us, r.between_fit.per_output_us, 100 * r.between_fit.share_of_op_time,
        r.between_fit.per_wrapped_us, r.between_fit.samples);
  }
  if (r.host_costs.ok()) {
    // The costs with the most measurements, where an op's host time shows.
    std::vector<std::pair<std::string, predictors::HostCost>> ops(r.host_costs.per_op.begin(),
                                                                  r.host_costs.per_op.end());
    std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
      return a.second.samples > b.second.samples;
    });
    fmt::print(
        "host time per op call (the CPU side of the device's replay): {} ops from {} "
        "measurements; median {:.2f} us for the {} that launch kernels, {:.2f} us for the {} that "
        "launch none",
        r.host_costs.per_op.size(), r.host_costs.samples, r.host_costs.launching_us,
        r.host_costs.launching_ops, r.host_costs.no_kernel_us, r.host_costs.no_kernel_ops);
    for (size_t i = 0; i < ops.size() && i < 6; ++i) {
      const predictors::HostCost& c = ops[i].second;
      if (c.per_launch_us > 0)
        fmt::print("; {} {:.2f} + {:.2f} per kernel", ops[i].first, c.fixed_us, c.per_launch_us);
      else
        fmt::print("; {} {:.2f}", ops[i].first, c.host_us);
    }
    fmt::print("\n");
  }
  if (!r.launch_scores.empty()) {
    fmt::print(
        "kernels per op call, from the shape (each op's trees scored on a fifth of its shapes; "
        "in brackets its median count's score; the trees are kept where they miss by less):\n");
    for (const predictors::LaunchCountScore& s : r.launch_scores) {
      fmt::print("  {:<36} {:5.1f}% exact ({:5.1f}%), off by {:.2f} ({:.2f}), {} points: {}\n",
                 s.op, 100 * s.exact_share, 100 * s.median_share, s.mean_abs_miss,
                 s.median_abs_miss, s.holdout, s.kept ? "trees" : "median");
    }
  }
  if (!r.code_cold.empty()) {
    const predictors::CodeColdModel& c = r.code_cold;
    fmt::print(
        "code cold (an op idle for t since its previous call pays P * (1 - exp(-t / {:.1f} ms)), "
        "the first after a long op S more): S = {:.1f} us, P = {:.1f} us over {} pairs",
        c.tau_us / 1e3, c.shared_us, c.all_us, c.pairs);
    for (const auto& [family, us] : c.per_family_us) fmt::print("; {} {:.1f}", family, us);
    fmt::print("\n");
  }
  if (!r.cold_tensors.empty()) {
    const predictors::ColdTensorModel& c = r.cold_tensors;
    fmt::print("cold tensors (a small op pays per input tensor that went cold): {:.2f} us over {} "
               "pairs",
               c.all_us, c.pairs);
    for (const auto& [family, us] : c.per_family_us) fmt::print("; {} {:.2f}", family, us);
    fmt::print("\n");
  }
  fmt::print("\nmeasured {:.1f} s, fitted {:.1f} s; {} samples (repeats pooled: {})\n",
             r.measure_seconds, r.fit_seconds, r.rows.size(), calibration::poolingName(r.pooling));
  fmt::print("dataset: {}\ndevice:  {}\n", r.dataset_path, r.device_path);
}

// An --out directory this run made is removed again when the run fails or is
// interrupted before writing into it; one that was there is left as it was.
class RemoveIfLeftEmpty {
 public:
  explicit RemoveIfLeftEmpty(std::string dir)
      : dir_(std::move(dir)), existed_(std::filesystem::exists(dir_)) {}
  ~RemoveIfLeftEmpty() {
    if (existed_ || dir_.empty()) return;
    std::error_code ec;
    if (std::filesystem::is_directory(dir_, ec) && std::filesystem::is_empty(dir_, ec))
      std::filesystem::remove(dir_, ec);
  }
  RemoveIfLeftEmpty(const RemoveIfLeftEmpty&) = delete;
  RemoveIfLeftEmpty& operator=(const RemoveIfLeftEmpty&) = delete;

 private:
  std::string dir_;
  bool existed_;
};

void runCalibrate(CalibrateArgs& args) {
  calibration::CalibrationOptions& o = args.options;
  const RemoveIfLeftEmpty cleanup(o.out_dir);
  // Caching by default: the ops' costs in mapped memory, as the kernel models
  // hold them; the predictor adds what mapping fresh pages costs a replay.
  o.host_malloc = applyHostMalloc(args.malloc_mode);
  fmt::print("host allocator: {}\n", o.host_malloc);
  o.torch_version = calibration::libtorchVersion();
  for (calibration::UnitRefill r : {calibration::UnitRefill::kAll, calibration::UnitRefill::kSettle,
                                    calibration::UnitRefill::kIndices})
    if (args.unit_refill == calibration::unitRefillName(r)) o.unit_refill = r;
  o.dtypes = calibration::parseGridDtypes(args.dtypes);
  if (args.refit) {
    const calibration::CalibrationResult r =
        calibration::refitFromDataset(o.out_dir, o.torch_version, o.fit, o.pooling);
    printReport(r);
    fmt::print("models:  {} (refitted from the dataset)\n", o.out_dir);
    return;
  }
  // comm is the distributed replay's sweep and sparse_add a LibTorch
  // microbenchmark of one op, not graph families: each runs after the graph
  // families asked for (if any), into the same directory.
  const auto comm_at = std::find(o.families.begin(), o.families.end(), "comm");
  const bool with_comm = comm_at != o.families.end();
  if (with_comm) {
    o.families.erase(comm_at);
    args.comm.out_dir = o.out_dir;
    args.comm.device = o.device;
    calibration::checkCommGrid(args.comm.grid);  // UsageError early
  }
  const auto sparse_at = std::find(o.families.begin(), o.families.end(), "sparse_add");
  const bool with_sparse_add = sparse_at != o.families.end();
  // A calibration without those families ran minutes and ignored them.
  requireFamilyFor(args.comm_options, with_comm, "comm");
  requireFamilyFor(args.sparse_add_options, with_sparse_add, "sparse_add");
  if (with_sparse_add) {
    o.families.erase(sparse_at);
    if (o.device != "cpu") {
      throw UsageError("calibrate --families sparse_add measures the CPU's sparse add_ only");
    }
    args.sparse_add.out_dir = o.out_dir;
    args.sparse_add.bench.threads = o.threads;
    calibration::checkSparseAddGrid(args.sparse_add.grid);  // UsageError early
  }
  if ((with_comm || with_sparse_add) && o.families.empty()) {
    if (with_sparse_add) calibrateSparseAddFamily(args.sparse_add);
    if (with_comm) calibrateComm(args.comm);
    return;
  }
  for (const std::string& f : o.families) calibration::microbenchFamily(f);  // UsageError early
  fmt::print("calibrating {} for {:.0f} s into {} (families: {}; each point {} times)\n", o.device,
             o.budget_s, o.out_dir,
             o.families.empty() ? "all" : fmt::format("{}", fmt::join(o.families, ",")), o.repeats);
  calibration::CalibrationResult r;
  int stopped_by = 0;  // the signal that arrived where no point is polled
  {
    // Ctrl-C, SIGTERM or SIGHUP stops at the next grid point; nothing is
    // written then (the dataset and models are written together at the end).
    const StopOnSignal stop({SIGINT, SIGTERM, SIGHUP});
    auto printer = std::make_shared<ProgressPrinter>();
    o.on_progress = [printer](const calibration::CalibrationProgress& p) {
      (*printer)(p);
      if (const int signal = StopOnSignal::requested(); signal != 0) {
        throw InterruptedError(
            fmt::format("calibrate: stopped by {} at point {} of {} of {} after {:.0f} s; "
                        "nothing was written",
                        StopOnSignal::describe(signal), p.done, p.total, p.family, p.elapsed_s));
      }
    };
    r = calibration::runCalibration(o);
    o.on_progress = nullptr;
    stopped_by = StopOnSignal::requested();
  }
  printReport(r);
  if (const std::string use = hostMallocUse(args.malloc_mode); !use.empty())
    fmt::print("{}\n", use);
  fmt::print("models:  {}\n", o.out_dir);
  if (stopped_by != 0) {
    // It arrived during the probes or the fit, where no point is polled.
    throw InterruptedError(fmt::format(
        "calibrate: {} arrived after the last grid point; the dataset and models were written "
        "in full to {}{}",
        StopOnSignal::describe(stopped_by), o.out_dir,
        with_comm || with_sparse_add ? " (the comm / sparse_add steps were not run)" : ""));
  }
  if (with_sparse_add) calibrateSparseAddFamily(args.sparse_add);
  if (with_comm) calibrateComm(args.comm);
}

std::function<void()> setupCalibrate(CLI::App& sub) {
  auto args = std::make_shared<CalibrateArgs>();
  calibration::CalibrationOptions& o = args->options;
  sub.add_option("--out", o.out_dir, "directory for dataset.jsonl, device.yaml and the models")
      ->required();
  sub.add_option("--device", o.device, "device to calibrate: cpu or cuda")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  sub.add_option("--budget-s", o.budget_s,
                 "microbenchmarks' time budget in seconds (the device probes, a few seconds, "
                 "and the fit come on top)")
      ->capture_default_str()
      ->check(numberAbove(0));
  sub.add_option("--families", o.families,
                 fmt::format("comma-separated microbenchmark families (default all: {}), and "
                             "comm: collectives x sizes x group sizes through the distributed "
                             "replay; sparse_add: SGD's add_ of a sparse embedding gradient, "
                             "written as DIR/sparse_add.json (neither in the default)",
                             fmt::join(calibration::microbenchFamilyNames(), ",")))
      ->delimiter(',');
  sub.add_option("--comm-sizes", args->comm.grid.sizes_bytes,
                 "comm: message sizes in bytes (nccl-tests' size; default 1 KiB .. 16 MiB by 4x)")
      ->delimiter(',')
      ->check(wholeNumberFor<int64_t>(1));
  sub.add_option("--comm-ranks", args->comm.grid.group_sizes,
                 "comm: group sizes, each one distributed replay on this host (default 2,3,4)")
      ->delimiter(',')
      ->check(wholeNumber(2, 1024));
  sub.add_option("--comm-collectives", args->comm.grid.collectives,
                 "comm: collectives (default all_reduce,all_gather,reduce_scatter,all_to_all,"
                 "broadcast)")
      ->delimiter(',');
  sub.add_option("--comm-iters", args->comm.iters,
                 "comm: measured iterations of each distributed replay (each runs every point "
                 "3 times)")
      ->capture_default_str()
      ->check(wholeNumber(1, 100));
  sub.add_option("--comm-spacer-mm", args->comm.grid.spacer_mm,
                 "comm: each measured collective follows an N x N by N x N float mm on every "
                 "rank, as a step's collectives follow compute (0: back to back, nccl-tests' "
                 "tight loop)")
      ->capture_default_str()
      ->check(wholeNumber(0, 8192));
  SparseAddCalibrationArgs& sa = args->sparse_add;
  sub.add_option("--sparse-add-rows", sa.grid.rows,
                 "sparse_add: table rows (default 5000,50000,200000,1000000)")
      ->delimiter(',');
  sub.add_option("--sparse-add-dims", sa.grid.dims, "sparse_add: row widths (default 16,32,64,128)")
      ->delimiter(',');
  sub.add_option("--sparse-add-nnz", sa.grid.nnz,
                 "sparse_add: lookups per update (default 1024,4096,15360,61440)")
      ->delimiter(',');
  sub.add_option("--sparse-add-zipf", sa.grid.zipf,
                 "sparse_add: index distributions, 0 uniform or a Zipf exponent (default 0,1.05,1.2)")
      ->delimiter(',');
  sub.add_option("--sparse-add-rounds", sa.bench.rounds,
                 "sparse_add: interleaved rounds over the grid; each point's median is fitted")
      ->capture_default_str()
      ->check(wholeNumber(1, 100));
  sub.add_option("--threads", o.threads,
                 "intra-op threads of every replay (the bundled traces were captured with 1)")
      ->capture_default_str()
      ->check(wholeNumber(1, 1024));
  o.repeats = 3;
  sub.add_option("--repeats", o.repeats,
                 "measure each point this many times, a pass apart, and pool them (--pool; the "
                 "first pass gets budget / repeats)")
      ->capture_default_str()
      ->check(wholeNumber(1, 20));
  sub.add_option("--pool", o.pooling,
                 "how a point's repeats become its sample: median, or fastest (what a shared host "
                 "disturbed least); with --refit, pools the dataset's repeats again")
      ->default_str("median")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, calibration::RepeatPooling>{
              {"median", calibration::RepeatPooling::kMedian},
              {"fastest", calibration::RepeatPooling::kFastest}},
          CLI::ignore_case));
  sub.add_option("--host-tolerance", o.host_tolerance,
                 "CPU: measure only while a reference loop runs within this factor of its "
                 "fast-phase time, and re-measure what a slowdown of a shared host hit (default 0: "
                 "off, the gauge is only recorded)")
      ->capture_default_str()
      ->check(numberIn(0, 10));
  sub.add_option("--cases", o.case_filter,
                 "only the grid points whose label matches this regular expression (e.g. "
                 "'hardswish|nll'); the labels are the dataset's `case` fields");
  sub.add_option("--dtypes", args->dtypes,
                 "comma-separated floating dtypes of the grids (default cpu: float32; cuda: "
                 "float32,float16,bfloat16). A calibration of one half precision alone "
                 "(--dtypes bfloat16) is that precision's model set: copied to DIR/bfloat16 of "
                 "another set, its models serve the ops that ran in it (autocast steps)")
      ->delimiter(',');
  sub.add_option("--seed", o.seed, "grid sampling order and tensor data")
      ->capture_default_str()
      ->check(wholeNumberFor<int64_t>(0));  // unsigned: -1 and 2^64 wrapped silently
  sub.add_option("--xgb-rounds", o.fit.xgb_rounds,
                 "boosting rounds of the XGBoost families (fewer: smaller model files)")
      ->capture_default_str()
      ->check(wholeNumberFor<int>(1));
  sub.add_option("--xgb-max-depth", o.fit.xgb_max_depth, "tree depth of the XGBoost families")
      ->capture_default_str()
      ->check(wholeNumber(1, 16));
  sub.add_option("--unit-refill", args->unit_refill,
                 "what each unit's replay does to its inputs between measured iterations, for "
                 "every family: all (refill them, time the next iteration), settle (refill, one "
                 "untimed iteration, then the timed one), indices (draw the indices anew, leave "
                 "the tables); default each family's own (embedding_bag: indices, the others: "
                 "all). To measure what the refill does to the same points")
      ->check(CLI::IsMember({"all", "settle", "indices"}));
  addHostMallocOption(sub, args->malloc_mode);
  sub.add_flag("--refit", args->refit,
               "fit again from DIR/dataset.jsonl and DIR/device.yaml without measuring");
  return [args, &sub] {
    for (const CLI::Option* option : sub.get_options()) {
      const std::string name = option->get_name();
      if (option->count() == 0) continue;
      if (name.rfind("--comm-", 0) == 0) args->comm_options.push_back(name);
      if (name.rfind("--sparse-add-", 0) == 0) args->sparse_add_options.push_back(name);
    }
    runCalibrate(*args);
  };
}

}  // namespace

TRACETWIN_REGISTER_COMMAND(calibrate, kCalibrateDescription, setupCalibrate);

}  // namespace tracetwin::cli
