// The distributed paths of `tracetwin replay`: the --nproc launcher, and one
// rank of a job that torchrun, srun, mpirun or the launcher started
// (docs/distributed.md).
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "cli/rank_launcher.h"
#include "cli/rank_report.h"
#include "cli/replay_args.h"
#include "cli/timeline_replay.h"
#include "core/errors.h"
#include "core/kineto/kineto_reader.h"
#include "core/kineto/linker.h"
#include "core/text_file.h"
#include "core/trace_reader.h"
#include "replay/result_json.h"

namespace tracetwin::cli {
namespace {

using replay::dist::PeerFailure;
using replay::dist::RankSession;

// This process's own command line: each rank runs the same command.
std::vector<std::string> ownArguments() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::string> args;
  size_t start = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    if (all[i] == '\0') {
      args.push_back(all.substr(start, i - start));
      start = i + 1;
    }
  }
  if (args.empty()) throw RuntimeFailure("cannot read this process's arguments (/proc/self/cmdline)");
  return args;
}

// "cuda" means the local rank's GPU: one GPU per rank on a host.
std::string rankDevice(const std::string& device, int local_rank) {
  return device == "cuda" ? fmt::format("cuda:{}", local_rank) : device;
}

// Rank 0's --timeline: every rank its own group. Rank 0's replay is drawn
// from its result (with kernels on CUDA), the others' from the reports they
// sent (their ops and collective waits); with --kineto, each rank's original
// is linked here from its own trace and Kineto trace.
timeline::Timeline rankTimeline(const ReplayArgs& args, const ReplayRun& run,
                                const std::vector<std::string>& reports) {
  timeline::Timeline t;
  for (size_t r = 0; r < reports.size(); ++r) {
    const int rank = int(r);
    if (!args.kineto.empty()) {
      if (rank == 0 && run.original) {
        t.views.push_back(*run.original);
      } else {
        const std::string kineto = replay::dist::expandRankPath(args.kineto, rank);
        const core::Graph graph = core::readTrace(replay::dist::expandRankPath(args.trace, rank));
        t.views.push_back(timeline::originalView(
            graph, core::kineto::linkTraces(graph, core::kineto::readKinetoTrace(kineto)), kineto,
            rank));
      }
    }
    if (rank == 0) {
      t.views.push_back(replayView(run.result, 0));
    } else {
      nlohmann::json doc;
      try {
        doc = nlohmann::json::parse(reports[r]);
      } catch (const nlohmann::json::exception& e) {
        throw InputError(fmt::format("rank {}: its replay report is not JSON: {}", rank, e.what()));
      }
      t.views.push_back(replayViewFromReport(doc, rank));
    }
  }
  return t;
}

void writeRankReports(const std::string& dir, const std::vector<std::string>& reports) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (size_t r = 0; r < reports.size(); ++r) {
    const std::string path = fmt::format("{}/rank{}.json", dir, r);
    core::writeTextFile(path, reports[r] + "\n");
  }
}

// Every rank's trace (and Kineto trace) can be opened before any rank starts:
// a rank failing on a missing file would leave its peers waiting at the
// rendezvous, and one message here says which file is missing.
void requireRankFiles(const ReplayArgs& args) {
  for (int rank = 0; rank < args.nproc; ++rank) {
    for (const std::string* pattern : {&args.trace, &args.kineto}) {
      if (pattern->empty()) continue;
      const std::string path = replay::dist::expandRankPath(*pattern, rank);
      if (!std::ifstream(path)) {
        throw InputError(fmt::format("rank {}: {}: cannot open its {}: {}", rank, path,
                                     pattern == &args.trace ? "trace" : "Kineto trace",
                                     std::strerror(errno)));
      }
    }
  }
}

// Rank 0: the merged report, its table and the files asked for.
void writeLeaderOutputs(const ReplayArgs& args, const ReplayRun& run,
                        const std::vector<std::string>& reports) {
  const nlohmann::json merged = mergeRankReports(reports);
  printRankTable(merged, stdout);
  if (!args.chrome_trace.empty()) {
    replay::writeChromeTrace(args.chrome_trace, run.result, run.extra_events);
    fmt::print("chrome trace (rank 0): {}\n", args.chrome_trace);
  }
  if (!args.timeline.empty()) writeTimelineFile(args.timeline, rankTimeline(args, run, reports));
  if (!args.json_out.empty()) writeJsonReport(args.json_out, merged);
  if (!args.rank_reports.empty()) writeRankReports(args.rank_reports, reports);
}

}  // namespace

void launchReplayRanks(const ReplayArgs& args) {
  requireRankFiles(args);
  LaunchSpec spec;
  spec.nproc = args.nproc;
  spec.program = ownExecutable();
  spec.argv = ownArguments();
  spec.grace_s = args.comm_timeout_s + 10;
  const LaunchResult launched = launchRanks(spec);
  for (const RankExit& r : launched.ranks) {
    if (r.exit_code != 0 || r.signal != 0) {
      fmt::print(stderr, "tracetwin: rank {} (pid {}) {}\n", r.rank, r.pid, describeExit(r));
    }
  }
  const int code = launchExitCode(launched);
  if (code == 0) return;
  const std::string what =
      launched.first_failed >= 0
          ? fmt::format("{} ranks: rank {} failed ({}) and the others followed; its message is above",
                        args.nproc, launched.first_failed,
                        describeExit(launched.ranks[size_t(launched.first_failed)]))
          : "interrupted";
  switch (code) {
    case 130: throw InterruptedError("distributed replay " + what);
    case 2: throw InputError("distributed replay of " + what);
    case 3: throw UnavailableError("distributed replay of " + what);
    default: throw RuntimeFailure("distributed replay of " + what);
  }
}

void runReplayRank(const ReplayArgs& args, const replay::dist::RankEnv& env) {
  replay::dist::RankSessionOptions session_options;
  session_options.env = env;
  session_options.device = rankDevice(args.options.device, env.local_rank);
  session_options.comm_timeout_s = args.comm_timeout_s;
  session_options.same_trace = !replay::dist::hasRankPlaceholder(args.trace);
  const auto session = RankSession::connect(session_options);
  ReplayArgs mine = args;
  mine.options.device = session_options.device;
  if (!args.index_distribution.empty())
    mine.index_distribution = replay::dist::expandRankPath(args.index_distribution, env.rank);
  const std::string trace = replay::dist::expandRankPath(args.trace, env.rank);
  const std::string kineto =
      args.kineto.empty() ? "" : replay::dist::expandRankPath(args.kineto, env.rank);
  const bool leader = env.rank == 0;
  ReplayRun run;
  try {
    run = replayAndReport(mine, trace, kineto, session, leader, [&](const std::string& why) {
      session->reportFailure("cannot read its trace: " + why);
    });
  } catch (const PeerFailure&) {
    throw;  // already names the peers
  } catch (const RuntimeFailure& e) {
    throw PeerFailure(session->explainFailure(e.what()));
  } catch (const InputError& e) {
    session->reportFailure(e.what());
    throw InputError(fmt::format("rank {}: {}", env.rank, e.what()));
  } catch (const UsageError& e) {
    session->reportFailure(e.what());
    throw UsageError(fmt::format("rank {}: {}", env.rank, e.what()));
  } catch (const UnavailableError& e) {
    session->reportFailure(e.what());
    throw UnavailableError(fmt::format("rank {}: {}", env.rank, e.what()));
  } catch (const Error& e) {
    session->reportFailure(e.what());
    throw;
  }
  std::vector<std::string> reports;
  try {
    reports = session->gatherReports(run.doc.dump());
  } catch (const PeerFailure&) {
    throw;
  } catch (const std::exception& e) {
    throw PeerFailure(session->explainFailure(e.what()));
  }
  // Stopped (Ctrl-C), every rank before the same iteration: what was measured
  // is still reported, as a single replay's is.
  if (leader) writeLeaderOutputs(args, run, reports);
  if (run.result.interrupted) {
    throw InterruptedError(fmt::format("rank {}: {}: replay stopped after {} measured iteration(s)",
                                       env.rank, trace, run.result.iterations_ms.size()));
  }
}

}  // namespace tracetwin::cli
