// `tracetwin predict 'DIR/rank{rank}.et.json.gz' --models DIR
// [--kernel-times 'DIR/rank{rank}.kineto.json.gz'] [--overheads F]
// [--rank-starts together|recorded] [--world-size N]`: every rank's trace
// predicted, then simulated together (predictors/simulation/joint_prediction.h).
#include "cli/predict_ranks.h"

#include <fmt/core.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/index_distribution_option.h"
#include "cli/timeline_file.h"
#include "core/errors.h"
#include "core/input_files.h"
#include "core/trace_reader.h"
#include "predictors/host/overheads.h"
#include "predictors/specs/device_spec.h"
#include "replay/dist/rank_env.h"
#include "timeline/sources.h"

namespace tracetwin::cli {
namespace {

// Rank 0, 1, ... while the files exist, or exactly `world_size` of them.
std::vector<std::string> rankTraces(const std::string& pattern, int64_t world_size) {
  if (world_size <= 0) replay::dist::countRankFiles(pattern);  // refuses a gap
  std::vector<std::string> paths;
  for (int r = 0; world_size > 0 ? r < world_size : true; ++r) {
    std::string path = replay::dist::expandRankPath(pattern, r);
    if (!std::filesystem::is_regular_file(path)) {
      if (world_size > 0) {
        throw UsageError(fmt::format("rank {} of {}: trace {} does not exist", r, world_size,
                                     path));
      }
      break;
    }
    paths.push_back(std::move(path));
  }
  if (paths.empty()) {
    throw UsageError(fmt::format("trace {}: no rank's file exists ({} for rank 0)", pattern,
                                 replay::dist::expandRankPath(pattern, 0)));
  }
  return paths;
}

// A per-rank option: `{rank}` expanded, else the same file for every rank.
std::string perRank(const std::string& option, const std::string& value, int rank) {
  if (value.empty()) return value;
  std::string path = replay::dist::expandRankPath(value, rank);
  if (const std::string problem = core::inputFileProblem(path); !problem.empty())
    throw UsageError(fmt::format("{} for rank {}: {}: {}", option, rank, problem, path));
  return path;
}

}  // namespace

void predictRanksCommand(const PredictArgs& args) {
  const std::vector<std::string> traces = rankTraces(args.trace, args.world_size);
  if (!args.kernel_times.empty() && !replay::dist::hasRankPlaceholder(args.kernel_times)) {
    throw UsageError(fmt::format(
        "--kernel-times {}: each rank has its own Kineto trace; name them with {{rank}} "
        "('DIR/rank{{rank}}.kineto.json.gz')",
        args.kernel_times));
  }
  if (args.rank_starts == "recorded" && args.kernel_times.empty()) {
    throw UsageError("--rank-starts recorded reads when each rank entered the iteration from its "
                     "--kernel-times trace; give --kernel-times 'DIR/rank{rank}.kineto.json.gz'");
  }
  std::deque<core::Graph> graphs;    // the inputs point into it
  std::set<core::DType> precisions;  // the precision sets any rank needs
  for (const std::string& trace : traces) {
    graphs.push_back(core::readTrace(trace));
    for (core::DType d : predictors::halfPrecisionsIn(graphs.back())) precisions.insert(d);
  }
  const predictors::ModelSet models = predictors::ModelSet::load(args.models, "", &precisions);
  predictors::PredictOptions common;
  applyTargets(args, &common);
  std::vector<predictors::RankInput> inputs;
  std::vector<std::optional<timeline::View>> originals(traces.size());
  for (size_t r = 0; r < traces.size(); ++r) {
    const int rank = int(r);
    predictors::RankInput in;
    in.graph = &graphs[r];
    in.opts = common;
    in.opts.comm_link = args.comm_link;
    in.opts.default_world_size = int64_t(traces.size());
    if (!args.overheads.empty())
      in.opts.overheads = predictors::loadOverheads(perRank("--overheads", args.overheads, rank));
    if (!args.index_distribution.empty()) {
      const IndexDistributionUse use = indexDistributionsFor(
          perRank("--index-distribution", args.index_distribution, rank), graphs[r]);
      in.opts.index_reuse = use.index_reuse;
      for (const std::string& note : use.notes) fmt::print("note: rank {}: {}\n", rank, note);
    }
    if (!args.kernel_times.empty()) {
      const auto linked = recordedKernels(
          graphs[r], perRank("--kernel-times", args.kernel_times, rank), models, &in.opts);
      if (args.rank_starts == "recorded") in.start_us = linked.iteration_start_us;
      if (!args.timeline.empty()) {
        originals[r] = timeline::originalView(
            graphs[r], linked, perRank("--kernel-times", args.kernel_times, rank), rank);
      }
    }
    inputs.push_back(std::move(in));
  }
  predictors::MultiRankOptions options;
  options.keep_schedule = !args.timeline.empty();
  options.host_cores = args.host_cores;
  predictors::MultiRankPrediction m = predictors::predictRanks(inputs, models, options);
  if (args.rank_starts == "recorded") {
    m.notes.push_back(
        "ranks entered the iteration when their Kineto traces say (--rank-starts recorded: the "
        "start of each linked iteration, on the clock the traces share)");
  }
  fmt::print("trace:      {} ({} ranks, simulated together)\n", args.trace, traces.size());
  fmt::print("device:     {}\n", m.ranks[0].prediction.device);
  printRanks(m);
  fmt::print("\nrank 0:\n");
  printPredictionDetail(m.ranks[0].prediction);
  for (const std::string& n : m.notes) fmt::print("note: {}\n", n);
  if (!args.timeline.empty()) {
    timeline::Timeline t = timeline::ranksTimeline(m, std::move(originals));
    t.notes.push_back(fmt::format(
        "{} ranks simulated together on one clock (--rank-starts {}); arrows link each "
        "collective's waiting members to the one they waited for",
        m.world_size, args.rank_starts));
    writeTimelineFile(args.timeline, t);
  }
  writeJson(predictors::multiRankToJson(m), args.json_out);
}

void printRanks(const predictors::MultiRankPrediction& m) {
  fmt::print("\nstep:       {:.3f} ms predicted ({} ranks{}; the slowest: rank {})\n",
             m.iteration_ms, m.world_size, m.symmetric ? ", identical" : "", m.slowest_rank);
  if (m.straggler >= 0) {
    double caused = 0;
    for (const auto& c : m.collectives) {
      if (c.last_rank != m.straggler) continue;
      for (double w : c.wait_us) caused += w;
    }
    fmt::print("straggler:  rank {} (the others waited {:.3f} ms for it, summed over ranks)\n",
               m.straggler, caused / 1000);
  } else {
    fmt::print("straggler:  none (no rank waited for another)\n");
  }
  fmt::print("\n{:>5} {:>9} {:>13} {:>11} {:>9} {:>9} {:>16}\n", "rank", "start ms",
             "iteration ms", "compute ms", "comm ms", "wait ms", "exposed comm ms");
  for (const auto& r : m.ranks) {
    fmt::print("{:>5} {:>9.3f} {:>13.3f} {:>11.3f} {:>9.3f} {:>9.3f} {:>16.3f}\n",
               m.symmetric ? "all" : std::to_string(r.rank), r.start_ms, r.iteration_ms,
               r.compute_ms, r.comm_ms, r.wait_ms, r.exposed_comm_ms);
  }
  for (const std::string& n : m.notes) fmt::print("note: {}\n", n);
  if (m.collectives.empty()) return;
  fmt::print("\n{:<22} {:<10} {:>11} {:>12} {:>10} {:>12}  {}\n", "collective", "group", "bytes",
             "transfer us", "last rank", "max wait us", "transfer from");
  for (const auto& c : m.collectives) {
    const double max_wait =
        c.wait_us.empty() ? 0.0 : *std::max_element(c.wait_us.begin(), c.wait_us.end());
    fmt::print("{:<22} {:<10} {:>11} {:>12.1f} {:>10} {:>12.1f}  {}\n",
               fmt::format("{} #{}", c.name, c.position), c.group.empty() ? "default" : c.group,
               c.bytes >= 0 ? std::to_string(c.bytes) : "uneven", c.transfer_us, c.last_rank,
               max_wait, c.transfer_from);
  }
}

}  // namespace tracetwin::cli
