#include "cli/sweep_measure.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <thread>

#include "calibration/core_speed_gauge.h"
#include "calibration/steady_cores_run.h"
#include "cli/stop_request.h"
#include "cli/temp_directory.h"
#include "core/errors.h"
#include "core/statistics.h"
#include "sweep/index_side_file.h"
#include "sweep/measure_stats.h"
#include "sweep/plan_traces.h"
#include "sweep/step_trace.h"

namespace tracetwin::cli {
namespace {

namespace fs = std::filesystem;

std::string selfExe() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) throw UnavailableError("cannot find this executable (/proc/self/exe)");
  return std::string(buf, size_t(n));
}

// Runs argv with stdout and stderr into `log`; returns its exit status.
// The replay ends with the sweep: a SIGTERM, SIGHUP or Ctrl-C the sweep gets
// (while a StopOnSignal guard is alive) is passed on as SIGTERM, and a sweep
// that dies anyway (SIGKILL) takes the replay with it (PR_SET_PDEATHSIG);
// `kill` of the sweep alone once left the replay and its ranks running.
int run(const std::vector<std::string>& argv, const std::string& log) {
  const pid_t sweep = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw RuntimeFailure("fork failed: cannot start the replay");
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != sweep) ::_exit(127);  // the sweep died before prctl
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  bool passed_on = false;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw RuntimeFailure("waitpid failed on the replay");
    if (StopOnSignal::requested() != 0 && !passed_on) {
      ::kill(pid, SIGTERM);
      passed_on = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (const int signal = StopOnSignal::requested(); signal != 0) {
    throw InterruptedError(
        fmt::format("sweep --measure stopped by {}", StopOnSignal::describe(signal)));
  }
  if (WIFSIGNALED(status)) {
    if (WTERMSIG(status) == SIGINT) throw InterruptedError("sweep --measure interrupted");
    return 128 + WTERMSIG(status);
  }
  return WEXITSTATUS(status);
}

}  // namespace

void checkMeasureArgs(const MeasureArgs& args) {
  if (args.core_tolerance > 0 && args.device != "cpu") {
    throw UsageError(fmt::format(
        "--core-tolerance gates replays on this host's CPU cores; with --measure-device {} "
        "each rank has a device of its own",
        args.device));
  }
}

nlohmann::json measurePlans(const sweep::SweepSpec& spec,
                            const std::vector<sweep::PlanResult>& ranked,
                            const MeasureArgs& args) {
  checkMeasureArgs(args);
  // The plans to measure, one per distinct assignment.
  std::vector<const sweep::PlanResult*> chosen;
  std::map<std::string, size_t> seen;
  for (const sweep::PlanResult& p : ranked) {
    if (!p.feasible) continue;
    if (!args.all && int64_t(chosen.size()) >= args.top) break;
    if (seen.emplace(sweep::planKey(p.plan), chosen.size()).second) chosen.push_back(&p);
  }
  if (chosen.size() < 2) {
    throw UsageError("sweep --measure needs at least two feasible plans of different "
                     "assignments to compare");
  }
  std::string dir = args.traces_dir;
  // Without --emit-traces the traces, logs and reports are the run's own:
  // removed when it ends (kept, and said, when it fails).
  std::optional<TempDirectory> temp;
  if (dir.empty()) {
    temp.emplace("tracetwin-sweep");
    dir = temp->path();
  }
  std::vector<const sweep::Plan*> measured_plans;
  for (const sweep::PlanResult* p : chosen) measured_plans.push_back(&p->plan);
  sweep::writePlanTraces(spec, measured_plans, dir);
  std::vector<std::string> patterns;
  std::vector<std::string> side_files;  // per plan: 'PLAN/rank{rank}.index.yaml'
  for (const sweep::PlanResult* p : chosen) {
    const fs::path pdir = fs::path(dir) / sweep::planDirectoryName(p->plan.name);
    patterns.push_back((pdir / "rank{rank}.et.json").string());
    side_files.push_back((pdir / sweep::indexSideFileName(-1)).string());
  }
  const std::string exe = selfExe();
  fmt::print(
      "\nmeasuring:  {} plans x {} rounds, each `tracetwin replay --nproc {}` ({} "
      "iterations, each after {} settle iteration(s)), plans alternated round by round{}; "
      "traces under {}{}\n",
      chosen.size(), args.rounds, spec.world_size, args.iters, args.settle,
      args.contender_rounds > 0
          ? fmt::format(", then {} rounds of those within {:.0f}% of the fastest",
                        args.contender_rounds, 100 * args.contender_within)
          : "",
      dir, temp ? " (removed at the end; --emit-traces DIR keeps them)" : "");
  std::vector<std::vector<double>> rounds(chosen.size());
  std::vector<std::vector<double>> slowdowns(chosen.size());  // with the core gate
  const bool gated = args.core_tolerance > 0;
  std::optional<calibration::CoreSpeedGauge> gauge;
  if (gated) {
    // A Ctrl-C while the gate waits ends the wait, not only the next replay.
    gauge.emplace(calibration::CoreSpeedGauge::onThisHost(10, [](double secs) {
      if (const int signal = StopOnSignal::requested(); signal != 0) {
        throw InterruptedError(
            fmt::format("sweep --measure stopped by {}", StopOnSignal::describe(signal)));
      }
      std::this_thread::sleep_for(std::chrono::duration<double>(secs));
    }));
  }
  const calibration::SteadyCoresOptions gate{args.core_tolerance};
  int64_t runs = 0, unsteady = 0;
  const StopOnSignal stop({SIGINT, SIGTERM, SIGHUP});  // passed on to the replay (run())
  // One replay of plan i, its step appended to rounds[i]. Each attempt
  // writes PLAN/replay.roundR.tryT.{json,log}; the kept one (the core gate
  // may run a round again) becomes PLAN/replay.roundR.{json,log}.
  const auto planDir = [&](size_t i) {
    return fs::path(dir) / sweep::planDirectoryName(chosen[i]->plan.name);
  };
  const auto measureOnce = [&](size_t i) {
    const fs::path round_stem = planDir(i) / fmt::format("replay.round{}", rounds[i].size());
    std::vector<std::pair<double, std::string>> attempts;  // step, file stem
    const auto replay = [&] {
      const std::string stem = fmt::format("{}.try{}", round_stem.string(), attempts.size());
      const std::string report = stem + ".json";
      const std::string log = stem + ".log";
      const int rc = run({exe, "replay", patterns[i], "--nproc", std::to_string(spec.world_size),
                          "--device", args.device, "--warmup", "2", "--iters",
                          std::to_string(args.iters), "--settle", std::to_string(args.settle),
                          "--index-distribution", side_files[i], "--json-out", report},
                         log);
      if (rc != 0) {
        throw RuntimeFailure(fmt::format("replay of plan {} failed (exit {}): see {}",
                                         chosen[i]->plan.name, rc, log));
      }
      std::ifstream in(report);
      const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
      // The mean step over the iterations (docs/distributed.md, "Medians
      // and means"); reports from before the means have only the median.
      const char* step_key =
          j.contains("iteration_ms_mean") ? "iteration_ms_mean" : "iteration_ms_median";
      if (j.is_discarded() || !j.contains(step_key)) {
        throw RuntimeFailure(
            fmt::format("replay of plan {} wrote no step: {}", chosen[i]->plan.name, report));
      }
      attempts.emplace_back(j[step_key].get<double>(), stem);
      return attempts.back().first;
    };
    size_t kept_run = 0;
    if (gauge) {
      const calibration::SteadyCoresRun kept = calibration::runOnSteadyCores(*gauge, gate, replay);
      kept_run = size_t(kept.kept_run);
      slowdowns[i].push_back(kept.slowdown);
      runs += kept.runs;
      unsteady += kept.steady ? 0 : 1;
    } else {
      replay();
    }
    rounds[i].push_back(attempts[kept_run].first);
    for (size_t k = 0; k < attempts.size(); ++k) {
      const std::string& stem = attempts[k].second;
      for (const char* ext : {".json", ".log"}) {
        std::error_code ec;  // a file that is gone is no reason to stop the sweep
        if (k == kept_run)
          fs::rename(stem + ext, round_stem.string() + ext, ec);
        else
          fs::remove(stem + ext, ec);
      }
    }
  };
  // Rounds over `plans` (indices into chosen), rotated: A B C, B C A, ...
  const auto measureRounds = [&](const std::vector<size_t>& plans, int64_t count,
                                 const char* what) {
    for (int64_t r = 0; r < count; ++r) {
      for (size_t k = 0; k < plans.size(); ++k) {
        measureOnce(plans[(k + size_t(r)) % plans.size()]);
        fmt::print(stderr, "\r{} {}/{}: plan {}/{}   ", what, r + 1, count, k + 1, plans.size());
      }
    }
  };
  std::vector<size_t> every(chosen.size());
  for (size_t i = 0; i < chosen.size(); ++i) every[i] = i;
  measureRounds(every, args.rounds, "round");
  const auto medians = [&] {
    std::vector<double> out;
    for (const std::vector<double>& r : rounds) out.push_back(core::median(r));
    return out;
  };
  nlohmann::json contenders;
  if (args.contender_rounds > 0) {
    const std::vector<double> before = medians();
    const std::vector<size_t> close = sweep::closeContenders(before, args.contender_within);
    std::vector<std::string> names;
    for (size_t i : close) names.push_back(chosen[i]->plan.name);
    fmt::print(stderr, "\n");
    if (close.size() >= 2) {
      fmt::print(
          "racing:     {} within {:.0f}% of the fastest after {} rounds: {} more rounds "
          "of them\n",
          fmt::join(names, ", "), 100 * args.contender_within, args.rounds, args.contender_rounds);
      measureRounds(close, args.contender_rounds, "racing round");
    } else {
      fmt::print("racing:     none: {} leads the others by more than {:.0f}% after {} rounds\n",
                 names.front(), 100 * args.contender_within, args.rounds);
    }
    contenders = {{"within", args.contender_within},
                  {"rounds", close.size() >= 2 ? args.contender_rounds : 0},
                  {"plans", names},
                  {"medians_before", before}};
  }
  fmt::print(stderr, "\n");
  std::vector<double> predicted;
  for (size_t i = 0; i < chosen.size(); ++i) predicted.push_back(chosen[i]->predicted_ms);
  const std::vector<double> measured = medians();
  // PLAN/replay.json: the round nearest the plan's measured step.
  std::vector<size_t> median_rounds;
  for (size_t i = 0; i < chosen.size(); ++i) {
    median_rounds.push_back(sweep::roundNearestMedian(rounds[i]));
    const fs::path from = planDir(i) / fmt::format("replay.round{}", median_rounds.back());
    for (const char* ext : {".json", ".log"}) {
      std::error_code ec;
      fs::copy_file(from.string() + ext, planDir(i) / (std::string("replay") + ext),
                    fs::copy_options::overwrite_existing, ec);
    }
  }
  const sweep::PickBest best = sweep::pickBest(predicted, measured);
  const double tau = sweep::kendallTau(predicted, measured);
  fmt::print("\n{:<24} {:>13} {:>12} {:>22}\n", "plan", "predicted ms", "measured ms",
             "rounds (min..max) ms");
  nlohmann::json plans = nlohmann::json::array();
  for (size_t i = 0; i < chosen.size(); ++i) {
    const auto [lo, hi] = std::minmax_element(rounds[i].begin(), rounds[i].end());
    fmt::print("{:<24} {:>13.3f} {:>12.3f} {:>13.3f}..{:<8.3f}{}{}\n", chosen[i]->plan.name,
               predicted[i], measured[i], *lo, *hi, i == best.predicted_best ? " P" : "",
               i == best.measured_best ? " M" : "");
    plans.push_back({{"name", chosen[i]->plan.name},
                     {"predicted_ms", predicted[i]},
                     {"measured_ms", measured[i]},
                     {"rounds_ms", rounds[i]},
                     {"median_round", median_rounds[i]}});
    if (gauge) plans.back()["rounds_core_slowdown"] = slowdowns[i];
  }
  fmt::print("\npick-best:  {} (predicted best {} measures {:.3f} ms, {:+.1f}% against the "
             "measured best {} at {:.3f} ms; success within 3%)\n",
             best.success ? "success" : "miss", chosen[best.predicted_best]->plan.name,
             measured[best.predicted_best], 100 * best.gap, chosen[best.measured_best]->plan.name,
             measured[best.measured_best]);
  fmt::print("kendall tau: {:.3f} (predicted vs measured order of {} plans)\n", tau,
             chosen.size());
  nlohmann::json paired;
  if (chosen.size() >= 2) {
    // The measured best against the predicted best, or when they are one
    // plan, against the measured runner-up: is the order beyond the drift?
    size_t against = best.predicted_best;
    if (against == best.measured_best) {
      against = best.measured_best == 0 ? 1 : 0;
      for (size_t i = 0; i < chosen.size(); ++i) {
        if (i != best.measured_best && measured[i] < measured[against]) against = i;
      }
    }
    const sweep::PairedRounds pr =
        sweep::compareCommonRounds(rounds[best.measured_best], rounds[against]);
    fmt::print(
        "rounds:      the measured best {} was faster than {} {} in {} of {} rounds "
        "(sign test p = {:.3f}: {})\n",
        chosen[best.measured_best]->plan.name,
        against == best.predicted_best ? "the predicted best" : "the runner-up",
        chosen[against]->plan.name, pr.faster, pr.faster + pr.slower + pr.ties, pr.sign_test_p,
        pr.sign_test_p < 0.05 ? "beyond the host's drift"
                              : "not beyond the host's drift at these rounds");
    paired = {{"plan", chosen[best.measured_best]->plan.name},
              {"against", chosen[against]->plan.name},
              {"faster", pr.faster},
              {"slower", pr.slower},
              {"ties", pr.ties},
              {"sign_test_p", pr.sign_test_p}};
  }
  nlohmann::json core_gate;
  if (gauge) {
    int64_t kept = 0;
    for (const std::vector<double>& r : rounds) kept += int64_t(r.size());
    fmt::print(
        "core gate:  every core within {:.2f}x of the fast phase; {} replays for {} "
        "rounds ({} run again), {} rounds kept unsteady, {:.0f} s waited (cores now: {})\n",
        args.core_tolerance, runs, kept, runs - kept, unsteady, gauge->waitedSeconds(),
        calibration::describeCoreSlowdowns(gauge->cpus(), gauge->readAll()));
    core_gate = {{"tolerance", args.core_tolerance},
                 {"replays", runs},
                 {"rounds", kept},
                 {"unsteady_rounds", unsteady},
                 {"waited_s", gauge->waitedSeconds()}};
  }
  nlohmann::json out = {{"plans", std::move(plans)},
                        {"rounds", args.rounds},
                        {"iters", args.iters},
                        {"settle", args.settle},
                        {"best_predicted", chosen[best.predicted_best]->plan.name},
                        {"best_measured", chosen[best.measured_best]->plan.name},
                        {"pick_best", best.success},
                        {"gap", best.gap},
                        {"kendall_tau", tau}};
  if (!paired.is_null()) out["paired_rounds"] = std::move(paired);
  if (!contenders.is_null()) out["contenders"] = std::move(contenders);
  if (gauge) out["core_gate"] = std::move(core_gate);
  return out;
}

}  // namespace tracetwin::cli
