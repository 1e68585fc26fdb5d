// One rank's part in a distributed replay (docs/distributed.md): the
// rendezvous store (c10d's TCPStore, the one torchrun uses), the process
// groups, the collective-sequence check, a barrier before each iteration,
// the timestamps around each collective, and the exchanges after the
// measured window. Torch-free interface; the implementation
// (rank_session.cpp) includes c10d, and a build without LibTorch gets
// rank_session_unavailable.cpp, whose connect() throws UnavailableError.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/graph.h"
#include "replay/dist/rank_env.h"
#include "replay/dist/wait_split.h"

namespace tracetwin::replay::comm {
class CommReplayer;  // replay/comm/comm_replayer.h
}

namespace tracetwin::replay::dist {

struct RankSessionOptions {
  RankEnv env;
  std::string device = "cpu";  // "cpu" (Gloo) or "cuda:N" (NCCL)
  // How long a rank waits for its peers (store, group creation, each
  // collective) before it gives up and names who did not come.
  double comm_timeout_s = 300;
  // The same trace on every rank (a path without {rank}).
  bool same_trace = false;
};

// A peer failed, hung or never came: the replay cannot go on. Exit code 4.
class PeerFailure : public RuntimeFailure {
 public:
  using RuntimeFailure::RuntimeFailure;
};

// Per collective call of one rank: what the exchange found.
struct CollectiveTiming {
  core::NodeId id = core::kNoNode;
  std::string name;   // canonical collective name
  std::string group;  // recorded group; empty: the world
  int64_t bytes = -1;
  double wait_us = 0;      // median over measured iterations
  double transfer_us = 0;  // median over measured iterations
  double wait_mean_us = 0;  // means over measured iterations
  double transfer_mean_us = 0;
};

// This rank's distributed figures and the job's step as every rank computes it.
struct DistributedSummary {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string launcher;
  std::string backend;  // "gloo", "nccl"
  std::string host;
  int comm_ops = 0;  // collectives per iteration ("wait" records excluded)
  double comm_ms = 0;
  double wait_ms = 0;
  double transfer_ms = 0;
  double wait_mean_ms = 0;  // means over measured iterations
  double transfer_mean_ms = 0;
  std::vector<CollectiveTiming> collectives;
  std::vector<std::string> notes;  // collectives issued another way on this backend
  // The job: per measured iteration the slowest rank, its median and mean.
  std::vector<double> step_ms;
  double step_ms_median = 0;
  double step_ms_mean = 0;
  int straggler = -1;
};

class RankSession {
 public:
  // Connects to the store: rank 0 hosts it, unless torchrun's agent does.
  // Throws PeerFailure when the store is not reachable within the timeout,
  // UnavailableError when the backend is not in this build.
  static std::shared_ptr<RankSession> connect(const RankSessionOptions& options);
  ~RankSession();
  RankSession(const RankSession&) = delete;
  RankSession& operator=(const RankSession&) = delete;

  int rank() const;
  int worldSize() const;

  // Before the replay plans the ops: creates the world group and the
  // recorded groups this rank belongs to, exchanges the collective sequences
  // of `ops` and compares them. Throws InputError (exit 2) naming the first
  // differing rank, position and collective; PeerFailure when a peer failed
  // or did not arrive in time.
  void prepare(const core::Graph& graph, const std::vector<core::NodeId>& ops);
  comm::CommReplayer& commReplayer();  // after prepare()

  // Around each replayed iteration: a barrier (not timed) and the origin of
  // the collectives' marks; then the marks of a measured iteration are kept.
  // beginIteration is also where ranks agree to stop: true when this rank or
  // any other asked to (`stop_here`: its Ctrl-C), the same on every rank.
  bool beginIteration(bool stop_here = false);
  void endIteration(bool measured, double iteration_ms);

  // After the measured window: every rank's times, exchanged, split into
  // wait and transfer.
  DistributedSummary finish();

  // Rank 0 gets every rank's report, in rank order; the others get nothing.
  std::vector<std::string> gatherReports(const std::string& mine);

  // Tells the peers this rank failed (best effort: the store may be gone).
  void reportFailure(const std::string& what) noexcept;
  // What to say about `error` (a collective or exchange that failed): the
  // collective this rank was in, and which peers reported failing or went
  // silent (polls their reports for a moment).
  std::string explainFailure(const std::string& error) noexcept;

 private:
  struct Impl;
  explicit RankSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracetwin::replay::dist
