// Ranks that share a host's cores (docs/prediction.md "Co-located ranks").
// The joint simulation gives each rank a host of its own; on one machine
// running N CPU ranks (`--nproc N`), their op bodies compete for the same
// cores. Modelled as processor sharing, solved by a fixed point over the
// joint simulation: simulate, measure at every instant how many threads the
// ranks of a host want, stretch each CPU op by how much less than its
// calibrated speed it got over its span, re-simulate until stable.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "predictors/simulation/joint_simulation.h"

namespace tracetwin::predictors {

struct SharedHost {
  std::vector<size_t> ranks;  // indices into the joint simulation's ranks
  double cores = 0;           // logical CPUs the ranks share
};

struct Colocation {
  std::vector<SharedHost> hosts;  // ranks on no host here run alone
  // Per rank: the intra-op threads its CPU op bodies keep busy (the replay's
  // --threads; the host models were calibrated alone with this many).
  std::vector<double> threads;
  // Threads a collective's transfer keeps busy on each member: Gloo moves
  // and reduces the data on a worker thread of the process group, while the
  // thread that waits for the group sleeps on a condition variable (no core;
  // see the docs). A transfer is stretched like an op, against the speed the
  // comm models were calibrated at: its group's members on one host moving
  // data and nothing else running (`calibrate --families comm`). So a
  // transfer that overlaps the ranks' compute (DDP's buckets during the
  // backward pass) slows down, and one between phases does not.
  double transfer_threads = 1.0;
  // kappa: how much slower an op whose time is all memory traffic runs while
  // another op of the host moves memory at full speed too (1 + kappa; the
  // host's two-stream probe, DeviceSpec::memory_contention). 0: the ranks
  // share the cores alone.
  double memory_contention = 0;
  const SyncJitter* jitter = nullptr;  // as simulateJoint's
  bool keep_schedule = false;  // each rank's SimResult::schedule (timelines)
  int max_iterations = 40;
  double tolerance = 1e-3;  // largest relative change of a stretch to stop at
};

struct ColocatedResult {
  JointResult joint;
  std::vector<std::vector<double>> stretch;  // per rank, per op: wall / alone (1: not shared)
  std::vector<double> transfer_stretch;      // per collective: its transfer's, likewise
  int iterations = 0;
  bool converged = true;
};

// Throws UsageError when a rank is on two hosts, a host has no cores or a
// rank no threads. Ops that are not cpu_only (a GPU rank's kernels) are
// never stretched: a device of its own per rank; nor are the transfers of
// collectives with no member on a shared host.
ColocatedResult simulateColocated(const std::vector<JointRank>& ranks,
                                  const std::vector<JointCollective>& collectives,
                                  const Colocation& colocation);

// Speed of an op of a rank with `own_threads`, while `demand` threads (its
// own included) want `cores`: min(1, C/D) over its alone speed min(1, C/T).
double sharedSpeed(double cores, double demand, double own_threads);

// When each of N jobs that start together on `cores` shared cores finishes,
// given the time each needs alone (`alone`, with `threads` threads each):
// processor sharing, as the fixed point above gives it for ranks that start
// a phase together and meet at a collective after it. While n jobs run,
// each progresses at sharedSpeed(cores, n * threads, threads), slowed by
// memorySpeed with kappa when `memory_shares` (per job) are given.
// cores <= 0: not shared, each finishes at its own time.
std::vector<double> sharedFinishTimes(const std::vector<double>& alone, double cores,
                                      double threads, double kappa = 0,
                                      const std::vector<double>& memory_shares = {});

// The share of an op's time (op_us) its bytes take at `bandwidth` (bytes/s),
// in [0, 1]; 0 without a bandwidth or a time.
double memoryShare(double bytes, double bandwidth, double op_us);

// While an op with `threads` threads runs among ops wanting `demand` threads
// in all (its own included) on `cores`, the part of the other ops' time that
// runs beside it: 1 while every thread has a core; past that the others take
// turns on the cores it leaves, (cores - threads) / (demand - threads), so
// at most the cores' worth of streams moves memory beside it.
double besideShare(double cores, double demand, double threads);

// The memory part of an op's speed: 1 / (1 + kappa * own * others), where
// `own` is its memory share and `others` the memory shares of the other ops
// of its host running beside it (their shares summed, times besideShare).
double memorySpeed(double kappa, double own, double others);

}  // namespace tracetwin::predictors
