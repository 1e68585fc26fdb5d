// `replay --host-time recorded | model`: the host time the original spent
// around each op, reproduced on the replaying thread. Torch-free and
// clock-free (the replay loop hands the planner its times), so tests feed
// made-up ones.
//
// An execution trace records the ops and nothing between them. Eager
// PyTorch spends host time there (CPython's per-call cost, module calls,
// autograd recording the graph, the optimizer's Python loop) and inside
// the ops beyond what a dispatcher call costs; where the host bounds a step
// the plain replay runs 2-5x faster than its original (docs/gpu.md:
// replay/original 0.21-0.66 for the default-size captures on an H100).
//
// Each op with a target (gap: from the previous op's end to its start; op:
// its span; recorded or modelled) has a balance
//
//   d = F * (gap + op) - (own gap + own call)
//
// with F the host scale (0.5: a host twice as fast), own gap the replay's
// time from the previous op's call to this call and own call its call, both
// means over warm-up iterations. Before each call the replay busy-waits
// for the balance carried so far when it is positive, and carries it when
// it is negative: an op whose own time exceeds the original's (a call
// longer than the original's op: ops_over, reported) gets no wait, and its
// excess comes out of the waits after it. So each op ends, relative to the
// iteration's start, when the original's did, unless the replay is already
// later there; launches then happen when the original's did relative to
// each other. What is still owed at the iteration's end is then taken back
// from the latest waits (repaid_ms): the step is as long as the original's
// unless the replay's own work alone is longer, by behind_ms.
//
// One balance per op, not a wait for its gap and another for its span:
// where a profiler's own cost falls between an op's span and the gap before
// it is not known (core/kineto/recorded_host_time.h), and both are the same
// host's time. Means, not medians: the original's recorded times include
// what the host's other work cost it (this 2-core VM at load 6-12 stretched
// single steps 2x), and so do means; medians left that out of the replay's
// own times and put it into the waits, twice. The balances are computed
// once, after the warm-up; the device work stays real.
//
// Time spent waiting for other ranks is not the host's: in a distributed
// replay each rank reproduces its own host time, and how long a collective
// then waits for its peers follows from theirs. The original's recorded
// times hold such waits (dlrm_tw on 2 CPU ranks here: a synchronous
// all_to_all of 13.1 ms and its backward of 10.2 ms, an all-reduce's wait of
// 9.4 ms before the div_ that reads it, of a 12.9 ms profiled step), and
// taken as host time they were waited for twice: busy-waited, then waited
// for again in the replay's own collective (recorded host time 1.4-2.3x the
// original). So a collective's call (`Op::collective`), and the gap before
// an op that waited for a collective's result in the warm-up (the replay's
// await, before the call) or that follows a collective with no target (one
// not linked to the Kineto trace, such as Gloo's bare `gloo:all_to_all`,
// whose original time lands in that gap), are neither waited for nor
// charged as the replay's own time (peer_bound_ops, peer_bound_ms).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/graph.h"
#include "replay/busy_wait.h"

namespace tracetwin::replay {

// What the original's host did for one op, in microseconds.
struct HostTarget {
  double gap_us = 0;  // from the end of the previous op (with a target) to this op's start (T1)
  double op_us = 0;   // the op's own CPU span
};

// An op whose replayed call already took longer than the original's op.
struct HostOverrun {
  core::NodeId id = core::kNoNode;
  std::string name;
  double original_us = 0;  // the scaled target, F * op
  double replay_us = 0;    // the replay's own call, warm-up median
};

// How the replay treated host time; in every report ("host_time").
struct HostTimeUse {
  std::string mode = "replayed";  // "replayed" | "recorded" | "model"
  double scale = 1.0;             // --host-scale
  std::string source;             // where the targets came from (set by the CLI)
  std::vector<std::string> notes;
  int64_t ops_with_target = 0;     // replayed ops that wait for the original's time
  int64_t ops_without_target = 0;  // replayed ops with nothing recorded or modelled: no wait
  int64_t warmup_samples = 0;      // warm-up iterations whose calls were measured
  double target_ms = 0;            // F * (gaps + ops) of the ops with a target
  double replay_own_ms = 0;        // the replay's own gaps and calls for them (warm-up)
  double wait_ms = 0;              // busy waits added per iteration (planned)
  int64_t ops_over = 0;            // calls already longer than F * op: no wait for them
  double ops_over_ms = 0;          // by how much, summed
  std::vector<HostOverrun> largest_overruns;  // of those, up to 5, largest first
  double absorbed_ms = 0;  // excess of ops over their own target taken off later waits
  double repaid_ms = 0;    // waits taken back for an excess later in the iteration
  double behind_ms = 0;    // excess left after that: the replay is that much longer
  double busy_wait_overshoot_us = 0;          // taken off each wait (replay/busy_wait.h)
  // Collectives' calls and gaps before awaiting a collective: waiting for
  // other ranks, left to the real collectives (see above).
  int64_t peer_bound_ops = 0;
  double peer_bound_ms = 0;  // the original's time there, F * (gap or op), not waited for
};

const std::vector<std::string>& hostTimeModes();  // "replayed", "recorded", "model"

struct HostTimePlan {
  std::vector<double> balance_us;  // per op index, signed; 0 for ops without a target
  std::vector<double> wait_us;     // per op index: the busy wait the balances give before it
  // Deadlines (closed loop): the replay spins before op i's call until
  // base + due_us[i] (negative: no deadline), base being the iteration's
  // start, or the start of the last call flagged rebase_at_start (one that
  // awaited a collective) or the end of the last flagged rebase_at_end (a
  // collective's call), whichever came last. With the warm-up's own times
  // the same waits as wait_us; when an iteration runs slower or faster than
  // the warm-up, the waits shrink or grow to keep the original's time.
  std::vector<double> due_us;
  std::vector<char> rebase_at_start;
  std::vector<char> rebase_at_end;
  HostTimeUse use;
};

class HostTimePlanner {
 public:
  struct Op {
    core::NodeId id = core::kNoNode;
    std::string name;
    std::optional<HostTarget> target;
    bool collective = false;  // its call waits for other ranks (op family "comm")
  };

  // `ops` in replay order (index = the op's index in the plan).
  HostTimePlanner(std::vector<Op> ops, double scale);

  // A warm-up iteration starts; its samples are one row.
  void beginIteration();
  // The op's call ran from `start_us` to `end_us`, microseconds from the
  // iteration's start. Ops that never call (stand-ins) are not sampled.
  // `awaited`: before the call the replay waited for a collective's result.
  void sample(size_t index, double start_us, double end_us, bool awaited = false);

  // The waits. An op with a target and samples is an anchor: its gap is
  // measured from the previous anchor's call, and the targets of ops between
  // two anchors that have no samples (stand-ins) join the later anchor's gap.
  HostTimePlan plan() const;

  size_t iterations() const { return rows_.size(); }

 private:
  struct Call {
    double start_us = -1;  // negative: not sampled in this iteration
    double end_us = -1;
    bool awaited = false;
  };
  std::vector<Op> ops_;
  double scale_;
  std::vector<std::vector<Call>> rows_;  // [iteration][op]
};

// What the replay was asked (the ReplayOptions fields of the same names).
struct HostTimeSettings {
  const std::string& mode;
  const std::unordered_map<core::NodeId, HostTarget>& targets;
  double scale = 1.0;
  int warmup_iters = 0;
};

// Throws UsageError for an unknown mode, a scale that is not a positive
// number, a scale or targets without a mode, or a mode without warm-up.
void checkHostTimeSettings(const HostTimeSettings& settings);

// The replay loop's side: samples the warm-up calls, plans the waits when the
// first iteration after the warm-up begins, and busy-waits before each call.
// With mode "replayed" every call is a no-op.
class HostTimeLoop {
 public:
  // `ops` in replay order; their targets come from `settings.targets` by id.
  // `report` (the result's host_time) gets the mode now and the plan later.
  HostTimeLoop(std::vector<HostTimePlanner::Op> ops, const HostTimeSettings& settings,
               HostTimeUse* report);

  // Whether warm-up iteration `iteration` is measured for the plan: all but
  // the first, which runs cold, unless it is the only one.
  bool samples(int iteration) const {
    return planner_ && iteration < warmup_iters_ && (iteration > 0 || warmup_iters_ == 1);
  }
  void setSampling(bool on) { sampling_ = on && planner_; }

  void beginIteration(int iteration) {
    if (!planner_) return;
    if (!planned_ && iteration >= warmup_iters_) plan();
    if (sampling_) planner_->beginIteration();
    waiter_.reset();  // no balance crosses iterations
  }
  // The iteration's clock starts (the replay loop's own start time): the
  // first base of the deadlines.
  void startClock(std::chrono::steady_clock::time_point start) {
    start_ = start;
    base_ = start;
  }
  void beforeCall(size_t index) {
    if (planned_ && due_us_[index] >= 0) {
      waiter_.until(base_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                std::chrono::duration<double, std::micro>(due_us_[index])));
    }
  }
  // `start_us`, `end_us`: from the time given to startClock.
  void afterCall(size_t index, double start_us, double end_us, bool awaited = false) {
    if (sampling_) planner_->sample(index, start_us, end_us, awaited);
    if (!planned_) return;
    auto at = [&](double us) {
      return start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                          std::chrono::duration<double, std::micro>(us));
    };
    if (rebase_at_start_[index]) base_ = at(start_us);
    if (rebase_at_end_[index]) base_ = at(end_us);
  }
  double waitUs(size_t index) const { return planned_ ? wait_us_[index] : 0.0; }

 private:
  void plan();

  std::optional<HostTimePlanner> planner_;  // none: mode "replayed"
  int warmup_iters_ = 0;
  bool sampling_ = false;
  bool planned_ = false;
  std::vector<double> balance_us_;  // per op index
  std::vector<double> wait_us_;     // per op index, for reports
  std::vector<double> due_us_;      // per op index (HostTimePlan)
  std::vector<char> rebase_at_start_, rebase_at_end_;
  std::chrono::steady_clock::time_point start_, base_;
  BusyWaiter waiter_;
  HostTimeUse* report_;
};

}  // namespace tracetwin::replay
