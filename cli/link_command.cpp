// `tracetwin link ET KINETO`: links an execution trace with the Kineto trace
// of the same run and prints the match summary and the original iteration.
// `tracetwin link --ranks DIR|FILES...`: the same for every rank of a job,
// with per-rank iteration / compute / communication time and their spread.
#include <fmt/core.h>
#include <fmt/format.h>  // fmt::join

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/command_registry.h"
#include "cli/fidelity_report.h"
#include "cli/output_paths.h"
#include "cli/unprofiled_overheads.h"
#include "core/errors.h"
#include "core/kineto/kineto_reader.h"
#include "core/kineto/linker.h"
#include "core/kineto/overheads.h"
#include "core/kineto/rank_summary.h"
#include "core/op_family.h"
#include "core/text_file.h"
#include "core/trace_reader.h"

namespace tracetwin::cli {
namespace {

namespace fs = std::filesystem;
namespace kt = core::kineto;

struct LinkArgs {
  std::string et_path;
  std::string kineto_path;
  std::vector<std::string> ranks;
  std::string json_out;
  std::string overheads_out;
  bool print_ops = false;
};

// "rank3.kineto.json.gz" -> {"rank3", true}; "rank3.et.json" -> {"rank3", false}.
std::pair<std::string, bool> stemOf(const fs::path& path) {
  std::string name = path.filename().string();
  for (const char* ext : {".gz", ".json"})
    if (name.size() > std::string(ext).size() &&
        name.compare(name.size() - std::string(ext).size(), std::string::npos, ext) == 0)
      name.resize(name.size() - std::string(ext).size());
  for (const char* tag : {".kineto", "_kineto", ".pt.trace", ".et", "_et"}) {
    std::string t = tag;
    if (name.size() > t.size() && name.compare(name.size() - t.size(), std::string::npos, t) == 0) {
      bool kineto = t != ".et" && t != "_et";
      return {name.substr(0, name.size() - t.size()), kineto};
    }
  }
  return {name, path.filename().string().find("kineto") != std::string::npos};
}

struct RankFiles {
  std::string et;
  std::string kineto;
};

std::map<std::string, RankFiles> collectRankFiles(const std::vector<std::string>& args) {
  std::vector<fs::path> files;
  for (const std::string& a : args) {
    if (fs::is_directory(a)) {
      for (const auto& entry : fs::directory_iterator(a))
        if (entry.is_regular_file()) files.push_back(entry.path());
    } else if (fs::exists(a)) {
      files.push_back(a);
    } else {
      throw UsageError(fmt::format("--ranks: '{}' does not exist", a));
    }
  }
  std::map<std::string, RankFiles> by_stem;
  for (const fs::path& f : files) {
    std::string name = f.filename().string();
    if (name.find(".json") == std::string::npos) continue;
    auto [stem, kineto] = stemOf(f);
    (kineto ? by_stem[stem].kineto : by_stem[stem].et) = f.string();
  }
  for (auto it = by_stem.begin(); it != by_stem.end();)
    it = it->second.kineto.empty() ? by_stem.erase(it) : std::next(it);
  if (by_stem.empty())
    throw UsageError("--ranks: no Kineto traces (*.kineto.json[.gz]) among the given paths");
  return by_stem;
}

void printTimeline(const kt::LinkedTimeline& t, bool print_ops) {
  fmt::print("ET      {}\nKineto  {}\n", t.et_source, t.kineto_source);
  fmt::print("linked by {}: {}/{} top-level ops ({:.2f}%), {}/{} ET nodes incl. labels\n", t.method,
             t.matched_ops, t.top_level_ops, 100.0 * t.match_rate, t.all_nodes_matched,
             t.all_nodes);
  for (const auto& th : t.threads)
    fmt::print(
        "  ET thread {} -> Kineto tid {}: {}/{} nodes{}\n", th.et_tid, th.kineto_tid,
        th.matched_nodes, th.et_nodes,
        th.uses_sequence_numbers
            ? fmt::format(", guided by sequence numbers (Kineto - ET = {})", th.sequence_offset)
            : "");
  if (const std::string weak = kt::weakLinkWarning(t); !weak.empty()) fmt::print("{}\n", weak);
  auto pct = [&](int64_t n) { return t.kernels ? 100.0 * double(n) / double(t.kernels) : 0.0; };
  fmt::print(
      "kernels: {}/{} attributed to an ET node ({:.2f}%): {} in top-level ops ({:.2f}%), "
      "{} launched directly by ET labels; streams [{}]\n",
      t.kernels_matched, t.kernels, pct(t.kernels_matched), t.kernels_in_ops, pct(t.kernels_in_ops),
      t.kernels_in_labels, fmt::join(t.streams, ", "));
  for (const auto& l : t.labels)
    fmt::print("  label node {} {}: {} kernels, {:.1f} us\n", l.id, l.name, l.kernels.size(),
               l.device_us);
  if (t.unlaunched_activities > 0) {
    fmt::print(
        "warning: {} of the trace's {} GPU activities have no launch in it: their ops' "
        "device time is missing{}\n",
        t.unlaunched_activities, t.activities,
        2 * t.unlaunched_activities > t.activities
            ? " (most of them: was the trace cut, or its cuda_runtime events dropped?)"
            : "");
  }
  fmt::print("iteration: {:.3f} ms ({})\n", t.iteration_ms, t.iteration_source);
  std::map<std::string, std::tuple<int64_t, double, double>> families;  // ops, cpu, device
  for (const auto& op : t.ops) {
    if (!op.matched) continue;
    auto& [n, cpu, dev] = families[core::opFamilyOfName(op.name)];
    ++n, cpu += op.duration_us / 1000.0, dev += op.device_us / 1000.0;
  }
  fmt::print("  {:<14} {:>6} {:>10} {:>10}\n", "family", "ops", "CPU ms", "device ms");
  for (const auto& [family, v] : families)
    fmt::print("  {:<14} {:>6} {:>10.3f} {:>10.3f}\n", family, std::get<0>(v), std::get<1>(v),
               std::get<2>(v));
  int shown = 0;
  for (const auto& op : t.ops)
    if (!op.matched && shown++ < 10) fmt::print("  unmatched: node {} {}\n", op.id, op.name);
  if (!print_ops) return;
  for (const auto& op : t.ops) {
    if (!op.matched) continue;
    fmt::print("  {:>10.1f} us {:>9.1f} us  dev {:>9.1f} us  k={:<3} {} (node {})\n",
               op.start_us - t.iteration_start_us, op.duration_us, op.device_us, op.kernels.size(),
               op.name, op.id);
  }
}

void runSingle(const LinkArgs& args) {
  if (args.et_path.empty() || args.kineto_path.empty())
    throw UsageError("link needs ET and KINETO paths, or --ranks DIR|FILES...");
  core::Graph graph = core::readTrace(args.et_path);
  kt::KinetoTrace trace = kt::readKinetoTrace(args.kineto_path);
  kt::LinkedTimeline timeline = kt::linkTraces(graph, trace);
  printTimeline(timeline, args.print_ops);
  if (!args.json_out.empty())
    core::writeTextFile(args.json_out, linkedTimelineJson(timeline, true).dump(2) + "\n");
  if (!args.overheads_out.empty()) {
    kt::OverheadCollector collector;
    const UnprofiledOverheads unprofiled = unprofiledOverheads(args.et_path, timeline, trace);
    fmt::print("{}\n", unprofiled.note);
    collector.addTrace(trace, kt::operatorsOfGraph(graph), unprofiled.host_us);
    if (unprofiled.host_us > 0)
      fmt::print("  T1-T5 samples: {:.3f} us per profiler record off, then x{:.3f}\n",
                 collector.lastCorrection().per_event_us, collector.lastCorrection().scale);
    else
      fmt::print("  T1-T5 samples: as recorded (the profiler's own cost included)\n");
    core::writeTextFile(args.overheads_out, kt::overheadsToJson(collector.finish()));
  }
}

nlohmann::json spreadJson(const kt::SpreadStat& s) {
  return {{"min", s.min},
          {"max", s.max},
          {"mean", s.mean},
          {"stddev", s.stddev},
          {"min_rank", s.min_rank},
          {"max_rank", s.max_rank},
          {"max_over_min", s.max_over_min}};
}

void runRanks(const LinkArgs& args) {
  std::vector<kt::RankSummary> ranks;
  nlohmann::json links = nlohmann::json::array();
  kt::OverheadCollector collector;
  for (const auto& [stem, files] : collectRankFiles(args.ranks)) {
    kt::KinetoTrace trace = kt::readKinetoTrace(files.kineto);
    std::optional<kt::LinkedTimeline> linked;
    kt::OperatorPredicate is_operator = kt::defaultOperatorPredicate();
    if (!files.et.empty()) {
      core::Graph graph = core::readTrace(files.et);
      linked = kt::linkTraces(graph, trace);
      is_operator = kt::operatorsOfGraph(graph);
      links.push_back(linkedTimelineJson(*linked, false));
    }
    collector.addTrace(trace, is_operator);
    ranks.push_back(kt::summarizeRank(trace, linked ? &*linked : nullptr));
    if (ranks.back().rank < 0) ranks.back().rank = static_cast<int64_t>(ranks.size() - 1);
  }
  std::sort(ranks.begin(), ranks.end(),
            [](const auto& a, const auto& b) { return a.rank < b.rank; });
  // Two traces of one rank would count it twice in the spread and the
  // overheads (the same file under two names, or two runs mixed).
  for (size_t i = 1; i < ranks.size(); ++i) {
    if (ranks[i].rank != ranks[i - 1].rank) continue;
    throw InputError(fmt::format(
        "--ranks: {} and {} are both rank {} (the Kineto traces' distributedInfo, or their "
        "order where they record none): give one trace per rank",
        ranks[i - 1].kineto_source, ranks[i].kineto_source, ranks[i].rank));
  }
  fmt::print("{:>4} {:>7} {:>12} {:>11} {:>9} {:>12} {:>9}  {}\n", "rank", "match%", "iteration ms",
             "compute ms", "comm ms", "exposed comm", "overlap", "window");
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : ranks) {
    // Without its ET a rank has no match rate (-1).
    const std::string match =
        r.match_rate < 0 ? std::string("-") : fmt::format("{:.2f}", r.match_rate * 100.0);
    fmt::print("{:>4} {:>7} {:>12.3f} {:>11.3f} {:>9.3f} {:>12.3f} {:>9.3f}  {}\n", r.rank, match,
               r.iteration_ms, r.compute_ms, r.comm_ms, r.exposed_comm_ms, r.overlap_ms,
               r.iteration_source);
    rows.push_back({{"rank", r.rank},
                    {"et", r.et_source},
                    {"kineto", r.kineto_source},
                    {"match_rate", r.match_rate},
                    {"iteration_ms", r.iteration_ms},
                    {"iteration_source", r.iteration_source},
                    {"compute_ms", r.compute_ms},
                    {"comm_ms", r.comm_ms},
                    {"overlap_ms", r.overlap_ms},
                    {"exposed_comm_ms", r.exposed_comm_ms},
                    {"gpu_busy_ms", r.gpu_busy_ms},
                    {"gpu_activities", r.gpu_activities}});
  }
  nlohmann::json spread;
  for (auto [name, field] : {std::pair{"iteration_ms", &kt::RankSummary::iteration_ms},
                             std::pair{"compute_ms", &kt::RankSummary::compute_ms},
                             std::pair{"comm_ms", &kt::RankSummary::comm_ms},
                             std::pair{"exposed_comm_ms", &kt::RankSummary::exposed_comm_ms}}) {
    kt::SpreadStat s = kt::spreadOf(ranks, field);
    spread[name] = spreadJson(s);
    fmt::print(
        "spread {:<16} min {:.3f} (rank {})  max {:.3f} (rank {})  mean {:.3f}  sd {:.3f}  max/min "
        "{:.3f}\n",
        name, s.min, s.min_rank, s.max, s.max_rank, s.mean, s.stddev, s.max_over_min);
  }
  if (!args.json_out.empty()) {
    nlohmann::json doc = {{"ranks", rows}, {"spread", spread}, {"links", links}};
    core::writeTextFile(args.json_out, doc.dump(2) + "\n");
  }
  if (!args.overheads_out.empty())
    core::writeTextFile(args.overheads_out, kt::overheadsToJson(collector.finish()));
}

std::function<void()> setupLink(CLI::App& sub) {
  auto args = std::make_shared<LinkArgs>();
  sub.add_option("et", args->et_path, "Execution trace (.json / .json.gz)");
  sub.add_option("kineto", args->kineto_path, "Kineto trace of the same run (.json / .json.gz)");
  sub.add_option("--ranks", args->ranks,
                 "Directories or files holding one <stem>.kineto.json[.gz] (and optionally "
                 "<stem>.et.json[.gz]) per rank");
  sub.add_option("--json-out", args->json_out, "Write the link / rank report as JSON")
      ->check(outputFile());
  sub.add_option("--overheads-out", args->overheads_out,
                 "Write the T1-T5 CPU overheads (tracetwin-overheads/1 JSON)")
      ->check(outputFile());
  sub.add_flag("--ops", args->print_ops, "Print every top-level op of the original iteration");
  return [args] {
    requireDistinctOutputs(
        {{"--json-out", &args->json_out}, {"--overheads-out", &args->overheads_out}});
    if (!args->ranks.empty() && (!args->et_path.empty() || !args->kineto_path.empty()))
      throw UsageError("link: give ET and KINETO paths or --ranks, not both");
    args->ranks.empty() ? runSingle(*args) : runRanks(*args);
  };
}

}  // namespace

TRACETWIN_REGISTER_COMMAND(link,
                           "Link an ET with its Kineto trace (original timeline, overheads, ranks)",
                           setupLink);

}  // namespace tracetwin::cli
