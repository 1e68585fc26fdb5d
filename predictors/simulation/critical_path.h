// Event-driven critical-path simulation over a plain list of ops (DESIGN.md
// "Critical path"): one CPU timeline per thread, one device timeline per
// stream. Kept free of graphs and models so tests can hand-build inputs.
// RankTimeline advances one rank op by op, so that the joint simulation of
// several ranks (joint_simulation.h) can hold a rank at a collective until
// its group has arrived; simulate() runs one rank to the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tracetwin::predictors {

struct SimOp {
  int64_t thread = 0;  // CPU timeline; a switch of thread in issue order is a hand-over
  int64_t stream = 0;  // device timeline (ignored when cpu_only)
  // CPU costs, microseconds: T1 gap before the op, T2 to first launch,
  // T4 per launch, T5 between launches, T3 after the last launch.
  double t1 = 0, t2 = 0, t3 = 0, t4 = 0, t5 = 0;
  int launches = 1;       // kernels launched; 0: CPU-only op
  double device_us = 0;   // total device time of its kernels
  bool cpu_only = false;  // CPU device: the op's time runs on its thread
  bool sync = false;      // CPU waits for its stream (item, D2H copy, sync)
  bool is_comm = false;   // collective: device time counts as communication
  // CPU op body: the share of its time its bytes take at the device's
  // bandwidth (memoryShare, colocation.h); co-located ranks contend for it.
  double memory_share = 0;
  // Cross-stream dependency: this op's kernel may not start before the
  // previous kernel on `wait_stream` (as of launch) has finished; -1: none.
  // A cpu_only op with one waits on its thread (the first op that touches
  // an asynchronous Gloo collective's tensors waits for it).
  int64_t wait_stream = -1;
  // Collectives across ranks: the kernel starts no earlier than this (the
  // slowest rank's arrival), microseconds from iteration start; <0: none.
  double rank_arrival_us = -1;
};

// What an op keeps its CPU timeline busy for beyond its T1, as simulate()
// advances it for an op that launches kernels (T2, T4 per launch, T5 between
// launches, T3) or none (T5 alone); a CPU device's op body is device time.
inline double hostUs(const SimOp& op) {
  if (op.launches <= 0) return op.t2 + op.t3 + op.t5;
  return op.t2 + op.t4 * op.launches + op.t5 * (op.launches - 1) + op.t3;
}

// Why a kernel started later than its launch (the timeline draws the wait).
enum class SimWait : uint8_t {
  kNone,        // started when launched
  kStream,      // its stream was still busy with earlier kernels
  kDependency,  // it waited for another stream (wait_stream)
  kRanks,       // it waited for the slowest rank (rank_arrival_us)
};

struct SimKernel {
  double launch_us = 0;  // when the CPU enqueued it
  double start_us = 0, end_us = 0;
  SimWait waited_for = SimWait::kNone;
};

// What the simulation did with one op, microseconds from the iteration start
// (simulate(ops, true)): its CPU span and, on a device, its kernels.
struct SimOpSchedule {
  double cpu_start_us = 0;  // its call began (after its T1 gap)
  double cpu_end_us = 0;    // its thread was free again
  // A synchronising op: the CPU waited for its stream from here to
  // cpu_end_us; < 0 when it did not wait.
  double sync_wait_from_us = -1;
  std::vector<SimKernel> kernels;  // empty on a CPU device
};

struct SimResult {
  double iteration_us = 0;       // from the rank's start to its last timeline's end
  double device_active_us = 0;   // union of busy intervals over all streams
  double device_idle_us = 0;     // iteration - active
  double cpu_bound_us = 0;       // idle spans where some CPU was still issuing
  // Communication not hidden under compute: |(comm U wait) U compute| -
  // |compute|, the waits being spans a collective was ready on this rank and
  // its group was not (an NCCL kernel spins through them).
  double exposed_comm_us = 0;
  double compute_us = 0;         // union of the non-collective ops' device (CPU: body) time
  double comm_us = 0;            // union of collective intervals: the transfer
  double wait_us = 0;            // union of the waits for the group
  std::vector<double> start_us;  // per op: device (or CPU for cpu_only) start
  std::vector<double> end_us;
  std::vector<double> wait_of;   // per op: how long the collective waited for its group
  std::vector<SimOpSchedule> schedule;  // per op, when asked for (keep_schedule)
};

// One rank's simulation, advanced op by op. Times are on a clock shared by
// all ranks: the rank enters the iteration at `start_us`.
class RankTimeline {
 public:
  // `keep_schedule`: also fill SimResult::schedule (timelines; ~100 bytes an
  // op and a kernel vector each, so off for plain predictions).
  explicit RankTimeline(const std::vector<SimOp>& ops, double start_us = 0,
                        bool keep_schedule = false);

  bool done() const { return next_ >= ops_.size(); }
  size_t next() const { return next_; }
  // When the next op's first kernel could start with this rank alone: it has
  // been launched, its stream is free, the stream it waits for has drained.
  // For a cpu_only op, when its body could start.
  double readyUs() const;
  // Runs the next op. `group_start_us` >= 0 makes it a collective whose group
  // starts it then (not before readyUs()): the time between is waiting, and
  // its kernels take `device_us` (>= 0) in total instead of the op's own.
  void advance(double group_start_us = -1, double device_us = -1);
  // The result once done().
  SimResult finish();

 private:
  struct Interval {
    double start, end;
    bool comm;
    SimWait reason;
  };
  double& threadClock(const SimOp& op);  // with the hand-over from the previous op's thread
  double handedOverClock(const SimOp& op) const;
  void summarise(SimResult* r) const;

  // Clocks by thread or stream id. A step has a handful of each and every
  // op looks two or three up: a scan of a short vector, where a hash map's
  // lookups and node allocations were ~2% of predicting 100k ops.
  class Clocks {
   public:
    const double* find(int64_t id) const {
      for (const auto& [key, clock] : entries_)
        if (key == id) return &clock;
      return nullptr;
    }
    // The clock of `id`, added at `initial` when it has none.
    double& at(int64_t id, double initial) {
      for (auto& [key, clock] : entries_)
        if (key == id) return clock;
      return entries_.emplace_back(id, initial).second;
    }

   private:
    std::vector<std::pair<int64_t, double>> entries_;
  };

  const std::vector<SimOp>& ops_;
  double start_us_;
  size_t next_ = 0;
  Clocks cpu_;          // thread -> CPU clock
  Clocks stream_free_;  // stream -> when its last kernel ends
  std::vector<Interval> intervals_;
  std::vector<std::pair<double, double>> waits_;
  double horizon_;
  bool keep_schedule_;
  SimResult r_;
};

// `keep_schedule`: also fill SimResult::schedule (timelines; ~100 bytes an
// op and a kernel vector each, so off for plain predictions).
SimResult simulate(const std::vector<SimOp>& ops, bool keep_schedule = false);

}  // namespace tracetwin::predictors
