#include "cli/compare_ranks.h"

#include <fmt/core.h>
#include <unistd.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <vector>

#include "calibration/host_speed.h"
#include "cli/core_gate.h"
#include "cli/index_distribution_option.h"
#include "cli/rank_launcher.h"
#include "cli/replay_args.h"
#include "cli/temp_directory.h"
#include "cli/timeline_file.h"
#include "cli/timeline_replay.h"
#include "core/errors.h"
#include "core/trace_reader.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/joint_prediction.h"
#include "replay/dist/rank_env.h"
#include "timeline/sources.h"

namespace tracetwin::cli {
namespace {

namespace fs = std::filesystem;

nlohmann::json row(const std::string& name, double measured_ms, double predicted_ms) {
  return {{"row", name},
          {"measured_ms", measured_ms},
          {"predicted_ms", predicted_ms},
          {"error_pct", errorPct(predicted_ms, measured_ms)}};
}

nlohmann::json replayRanks(const CompareRanksArgs& a, const fs::path& report,
                           const fs::path& rank_reports) {
  LaunchSpec spec;
  spec.nproc = a.nproc;
  spec.program = ownExecutable();
  spec.argv = {spec.program, "replay", a.trace, "--nproc", std::to_string(a.nproc),
               "--device", a.device, "--warmup", std::to_string(a.warmup), "--iters",
               std::to_string(a.iters), "--settle", std::to_string(a.settle), "--comm-timeout-s",
               fmt::format("{}", a.comm_timeout_s), "--json-out", report.string()};
  if (a.threads > 0) spec.argv.insert(spec.argv.end(), {"--threads", std::to_string(a.threads)});
  for (const std::string& lib : a.op_libraries) spec.argv.insert(spec.argv.end(), {"--op-library", lib});
  if (!rank_reports.empty()) spec.argv.insert(spec.argv.end(), {"--rank-reports", rank_reports});
  if (!a.index_distribution.empty())
    spec.argv.insert(spec.argv.end(), {"--index-distribution", a.index_distribution});
  spec.grace_s = a.comm_timeout_s + 10;
  const LaunchResult launched = launchRanks(spec);
  if (const int code = launchExitCode(launched); code != 0) {
    const std::string what = fmt::format(
        "compare --nproc {}: the distributed replay failed ({}); its message is above", a.nproc,
        launched.first_failed >= 0
            ? fmt::format("rank {} {}", launched.first_failed,
                          describeExit(launched.ranks[size_t(launched.first_failed)]))
            : "interrupted");
    if (code == 130) throw InterruptedError(what);
    if (code == 2) throw InputError(what);
    if (code == 3) throw UnavailableError(what);
    throw RuntimeFailure(what);
  }
  std::ifstream in(report);
  if (!in) throw RuntimeFailure(fmt::format("{}: the distributed replay wrote no report",
                                            report.string()));
  return nlohmann::json::parse(in);
}

predictors::MultiRankPrediction predict(const CompareRanksArgs& a, const nlohmann::json& replayed,
                                        std::deque<core::Graph>* graphs) {
  const predictors::ModelSet models = predictors::ModelSet::load(a.models);
  const auto& ranks = replayed.at("ranks");
  auto leftOut = [&](size_t r) {
    predictors::PredictOptions opts;
    for (const auto& id : ranks.at(r).value("left_out_ops", nlohmann::json::array()))
      opts.excluded.insert(id.get<core::NodeId>());
    opts.default_world_size = a.nproc;
    opts.keep_schedule = !a.timeline.empty();
    return opts;
  };
  if (!replay::dist::hasRankPlaceholder(a.trace)) {
    graphs->push_back(core::readTrace(a.trace));
    predictors::PredictOptions opts = leftOut(0);
    opts.index_reuse = indexDistributionsFor(a.index_distribution, graphs->back()).index_reuse;
    return predictors::predictSymmetric(graphs->back(), a.nproc, models, opts);
  }
  std::vector<predictors::RankInput> inputs;
  for (int r = 0; r < a.nproc; ++r) {
    graphs->push_back(core::readTrace(replay::dist::expandRankPath(a.trace, r)));
    predictors::RankInput in;
    in.graph = &graphs->back();
    in.opts = leftOut(size_t(r));
    if (!a.index_distribution.empty()) {
      in.opts.index_reuse =
          indexDistributionsFor(replay::dist::expandRankPath(a.index_distribution, r),
                                graphs->back())
              .index_reuse;
    }
    inputs.push_back(std::move(in));
  }
  predictors::MultiRankOptions options;
  options.keep_schedule = !a.timeline.empty();
  options.host_cores = a.host_cores;
  options.rank_threads = a.threads > 0 ? a.threads : 1;
  return predictors::predictRanks(inputs, models, options);
}

// Each rank's replay (from its own report) beside the joint prediction's
// views (ranksTimeline: each rank's prediction and the collectives' links).
void writeRanksTimeline(const CompareRanksArgs& a, const predictors::MultiRankPrediction& m,
                        const fs::path& rank_reports) {
  timeline::Timeline t = timeline::ranksTimeline(m);
  for (int r = 0; r < a.nproc; ++r) {
    const fs::path path = rank_reports / fmt::format("rank{}.json", r);
    std::ifstream in(path);
    if (!in) {
      throw RuntimeFailure(
          fmt::format("{}: the distributed replay wrote no report", path.string()));
    }
    nlohmann::json report;
    try {
      report = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw RuntimeFailure(fmt::format("{}: not JSON: {}", path.string(), e.what()));
    }
    t.views.push_back(replayViewFromReport(report, r));
  }
  t.notes.push_back(fmt::format(
      "compare --nproc {}: each rank's replay (its last measured iteration) and the {} prediction "
      "(one clock for all ranks; arrows link each collective's waiting members to the one they "
      "waited for)",
      a.nproc, m.symmetric ? "symmetric ranks'" : "joint"));
  writeTimelineFile(a.timeline, t);
}

void printComparison(const CompareRanksArgs& a, const nlohmann::json& doc) {
  fmt::print("\ncompare {} on {} ranks ({}) with models {}\n", a.trace, a.nproc, a.device,
             a.models);
  const auto& step = doc.at("step");
  fmt::print(
      "step: measured {:.3f} ms (mean over iterations; median {:.3f}), predicted {:.3f} ms "
      "({:+.1f}%)\n",
      step.at("measured_ms").get<double>(), step.value("measured_median_ms", 0.0),
      step.at("predicted_ms").get<double>(), step.at("error_pct").get<double>());
  for (const auto& r : doc.at("ranks")) {
    fmt::print("\nrank {}\n{:<16} {:>13} {:>14} {:>9}\n", r.at("rank").get<int>(), "family",
               "measured ms", "predicted ms", "error");
    for (const auto& x : r.at("rows")) {
      fmt::print("{:<16} {:>13.3f} {:>14.3f} {:>8.1f}%\n", x.at("row").get<std::string>(),
                 x.at("measured_ms").get<double>(),
                 x.at("predicted_ms").get<double>(), x.at("error_pct").get<double>());
    }
  }
}

}  // namespace

double errorPct(double predicted, double measured) {
  return measured > 0 ? 100.0 * (predicted - measured) / measured : 0.0;
}

nlohmann::json compareRanksJson(const nlohmann::json& replayed, const nlohmann::json& predicted,
                                bool on_gpu) {
  nlohmann::json doc;
  // The mean over iterations: the prediction is a step's expected time, and
  // where a host stalls some iterations (Gloo on a shared CPU: a scheduler
  // tick in a share of the collectives) the median jumps between the modes.
  doc["step"] =
      row("step", replayed.value("iteration_ms_mean", 0.0), predicted.value("iteration_ms", 0.0));
  doc["step"]["measured_median_ms"] = replayed.value("iteration_ms_median", 0.0);
  doc["ranks"] = nlohmann::json::array();
  const auto& pred_ranks = predicted.at("ranks");
  const bool symmetric = predicted.value("symmetric", false);
  for (const auto& m : replayed.at("ranks")) {
    const int rank = m.at("rank").get<int>();
    // One trace for every rank: the one predicted rank stands for all.
    const auto& p = pred_ranks.at(symmetric ? 0 : size_t(rank));
    nlohmann::json rows = nlohmann::json::array();
    const auto& mf = m.value("families", nlohmann::json::object());
    const auto& pf = p.value("families", nlohmann::json::object());
    std::set<std::string> families;
    for (const auto& [f, v] : mf.items()) families.insert(f);
    for (const auto& [f, v] : pf.items()) families.insert(f);
    families.erase("comm");  // its transfer and wait rows below
    for (const std::string& f : families) {
      const double measured =
          mf.contains(f) ? mf[f].value(on_gpu ? "device_us" : "cpu_us", 0.0) / 1000 : 0.0;
      const double pred = pf.contains(f) ? pf[f].value("device_us", 0.0) / 1000 : 0.0;
      rows.push_back(row(f, measured, pred));
    }
    // Families are medians per op (an op's time is unimodal); the
    // collectives and the iteration are means, like the step.
    rows.push_back(row("comm transfer", m.value("transfer_mean_ms", 0.0), p.value("comm_ms", 0.0)));
    rows.push_back(row("comm wait", m.value("wait_mean_ms", 0.0), p.value("wait_ms", 0.0)));
    rows.push_back(
        row("iteration", m.value("iteration_ms_mean", 0.0), p.value("iteration_ms", 0.0)));
    doc["ranks"].push_back({{"rank", rank}, {"rows", rows}});
  }
  return doc;
}

void compareRanks(const CompareRanksArgs& a) {
  // The merged report and the ranks' reports (they can be large) live in a
  // private directory, removed however compare ends well.
  const TempDirectory work("tracetwin-compare-ranks");
  const fs::path report = fs::path(work.path()) / "replay.json";
  const fs::path rank_reports = a.timeline.empty() ? fs::path() : fs::path(work.path()) / "ranks";
  // The host's speed around the replay against the models' calibration, as
  // one-rank compare measures it (calibration/host_speed.h).
  std::optional<calibration::HostSpeed> host_speed;
  if (const fs::path spec = fs::path(a.models) / "device.yaml";
      a.host_speed_check && a.device == "cpu" && fs::is_regular_file(spec)) {
    host_speed = calibration::hostSpeedBefore(predictors::loadDeviceSpec(spec.string()));
  }
  nlohmann::json replayed;
  fs::path kept_rank_reports = rank_reports;
  std::optional<CoreGateRun> gate;
  if (a.core_tolerance > 0) {
    // Each attempt's rank reports apart: the timeline shows the kept one.
    std::vector<nlohmann::json> attempts;
    if (!rank_reports.empty()) fs::create_directories(rank_reports);
    const auto reportsOf = [&](size_t attempt) {
      return rank_reports.empty() ? rank_reports : rank_reports / fmt::format("try{}", attempt);
    };
    gate = runOnSteadyCoresHere(a.core_tolerance, [&] {
      attempts.push_back(replayRanks(a, report, reportsOf(attempts.size())));
      return attempts.back().value("iteration_ms_mean", 0.0);
    });
    const auto kept = size_t(gate->kept.kept_run);
    replayed = std::move(attempts[kept]);
    kept_rank_reports = reportsOf(kept);
  } else {
    replayed = replayRanks(a, report, rank_reports);
  }
  if (host_speed) calibration::finishHostSpeed(&*host_speed);
  std::deque<core::Graph> graphs;
  const predictors::MultiRankPrediction m = predict(a, replayed, &graphs);
  if (!a.timeline.empty()) writeRanksTimeline(a, m, kept_rank_reports);
  const nlohmann::json predicted = predictors::multiRankToJson(m);
  nlohmann::json doc = compareRanksJson(replayed, predicted, a.device != "cpu");
  doc["trace"] = a.trace;
  doc["models"] = a.models;
  doc["nproc"] = a.nproc;
  doc["device"] = a.device;
  doc["measured_step_ms"] = replayed.value("step_ms", nlohmann::json::array());
  doc["predicted_straggler"] = predicted.at("straggler");
  doc["measured_straggler"] = replayed.value("straggler", -1);
  doc["notes"] = predicted.value("notes", nlohmann::json::array());
  if (host_speed) doc["host_speed"] = calibration::hostSpeedToJson(*host_speed);
  if (gate) doc["core_gate"] = coreGateJson(*gate);
  printComparison(a, doc);
  fmt::print("straggler: measured rank {} (slowest in most iterations), predicted {}\n",
             replayed.value("straggler", -1),
             m.straggler >= 0 ? fmt::format("rank {} (the others waited for it)", m.straggler)
                              : std::string("none (no rank waited)"));
  for (const std::string& n : m.notes) fmt::print("note: {}\n", n);
  if (host_speed) fmt::print("{}\n", calibration::hostSpeedLine(*host_speed));
  if (gate) fmt::print("{}\n", coreGateLine(*gate));
  if (!a.json_out.empty()) writeJsonReport(a.json_out, doc);
}

}  // namespace tracetwin::cli
