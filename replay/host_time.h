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
// replay/original 0.21-0.66 for the default-size captures on an H100). Each
// op with a target gets one busy wait before its call:
//
//   wait = max(0, F * gap  - the replay's own time since the previous op's call)
//        + max(0, F * op   - the replay's own call of the op)
//
// where gap and op are the original's (recorded or modelled), F the host
// scale (0.5: a host twice as fast) and the replay's own times medians over
// warm-up iterations. A call that already costs more than F * op gets no op
// wait, and the plan reports it (ops_over). The waits are computed once,
// after the warm-up; the device work stays real.
#pragma once

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
  double wait_ms = 0;              // added per iteration = gap_wait_ms + op_wait_ms
  double gap_wait_ms = 0;
  double op_wait_ms = 0;
  int64_t ops_over = 0;  // calls already longer than F * op: no op wait
  double ops_over_ms = 0;
  int64_t gaps_over = 0;  // the replay's own time before a call already longer than F * gap
  double gaps_over_ms = 0;
  std::vector<HostOverrun> largest_overruns;  // up to 5, largest first
  double busy_wait_overshoot_us = 0;          // taken off each wait (replay/busy_wait.h)
};

const std::vector<std::string>& hostTimeModes();  // "replayed", "recorded", "model"

struct HostTimePlan {
  std::vector<double> wait_us;  // per op index
  HostTimeUse use;
};

class HostTimePlanner {
 public:
  struct Op {
    core::NodeId id = core::kNoNode;
    std::string name;
    std::optional<HostTarget> target;
  };

  // `ops` in replay order (index = the op's index in the plan).
  HostTimePlanner(std::vector<Op> ops, double scale);

  // A warm-up iteration starts; its samples are one row.
  void beginIteration();
  // The op's call ran from `start_us` to `end_us`, microseconds from the
  // iteration's start. Ops that never call (stand-ins) are not sampled.
  void sample(size_t index, double start_us, double end_us);

  // The waits. An op with a target and samples is an anchor: its gap is
  // measured from the previous anchor's call, and the targets of ops between
  // two anchors that have no samples (stand-ins) join the later anchor's gap.
  HostTimePlan plan() const;

  size_t iterations() const { return rows_.size(); }

 private:
  struct Call {
    double start_us = -1;  // negative: not sampled in this iteration
    double end_us = -1;
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
  }
  void beforeCall(size_t index) {
    if (planned_) waiter_.wait(wait_us_[index]);
  }
  void afterCall(size_t index, double start_us, double end_us) {
    if (sampling_) planner_->sample(index, start_us, end_us);
  }
  double waitUs(size_t index) const { return planned_ ? wait_us_[index] : 0.0; }

 private:
  void plan();

  std::optional<HostTimePlanner> planner_;  // none: mode "replayed"
  int warmup_iters_ = 0;
  bool sampling_ = false;
  bool planned_ = false;
  std::vector<double> wait_us_;  // per op index
  BusyWaiter waiter_;
  HostTimeUse* report_;
};

}  // namespace tracetwin::replay
