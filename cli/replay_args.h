// What `tracetwin replay` was asked, and the pieces its single-process and
// distributed paths share (cli/replay_command.cpp, cli/replay_ranks.cpp).
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/host_malloc.h"
#include "replay/dist/rank_env.h"
#include "replay/dist/rank_session.h"
#include "replay/replayer.h"
#include "timeline/timeline.h"

namespace tracetwin::cli {

struct ReplayArgs {
  std::string trace;
  replay::ReplayOptions options;
  std::string json_out;
  HostMalloc malloc_mode = HostMalloc::kPinned;
  std::string chrome_trace;
  std::string timeline;  // --timeline: original (with --kineto) and replay, one trace
  std::string kineto;
  std::string streams = "recorded";  // with --kineto: "recorded" or "one"
  // The model set (tracetwin calibrate / fit): with --host-time model its
  // prediction gives each op's host time (cli/host_time_source.h), with the
  // T1-T5 of `overheads` when given; for torch.compile steps its kernel
  // times are mode 3 stand-ins of compiled kernels.
  std::string models;
  std::string overheads;
  int nproc = 0;                     // > 0: launch that many ranks on this host
  // --rank-reports DIR (with {rank} or --nproc): each rank's own report as
  // DIR/rank{r}.json, written by rank 0 (compare --nproc --timeline draws the
  // ranks' replays from them).
  std::string rank_reports;
  double comm_timeout_s = 300;
  // --index-distribution: the lookups' index distributions (cli/index_distribution_option.h);
  // '{rank}' expanded per rank.
  std::string index_distribution;
};

struct ReplayRun {
  replay::ReplayResult result;
  nlohmann::json doc;           // the --json-out report
  nlohmann::json extra_events;  // the original's timeline, for --chrome-trace
  std::optional<timeline::View> original;  // with --kineto, for --timeline
  std::string host_malloc;
};

// Replays `trace` (beside the original's Kineto trace `kineto` when not
// empty) as one rank of `session` (null: on its own), and builds its report;
// prints the summary when `print`. `on_read_failure` hears why the trace
// could not be read before the error propagates.
ReplayRun replayAndReport(const ReplayArgs& args, const std::string& trace,
                          const std::string& kineto,
                          std::shared_ptr<replay::dist::RankSession> session, bool print,
                          const std::function<void(const std::string&)>& on_read_failure = {});

void writeJsonReport(const std::string& path, const nlohmann::json& doc);

// `--nproc N`: starts the ranks and waits for them (cli/replay_ranks.cpp).
void launchReplayRanks(const ReplayArgs& args);
// This process is one rank of a launched job (torchrun, srun, mpirun, --nproc).
void runReplayRank(const ReplayArgs& args, const replay::dist::RankEnv& env);

}  // namespace tracetwin::cli
