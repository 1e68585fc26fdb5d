// Several ranks simulated together (docs/prediction.md "Multi-rank
// prediction"): each rank's CPU threads and streams as in simulate(), and a
// collective that synchronises its group: it is ready on a rank at that
// rank's own dependencies, starts when the last member is ready, takes the
// transfer time, and ends on every member together. Plain data in, so tests
// can hand-build ranks; joint_prediction.h builds them from traces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "predictors/comm/sync_jitter.h"
#include "predictors/simulation/critical_path.h"

namespace tracetwin::predictors {

struct JointRank {
  std::vector<SimOp> ops;
  double start_us = 0;  // when the rank enters the iteration, on the clock all ranks share
  // Per op: index into the collectives; -1 for an op that synchronises no one.
  std::vector<int64_t> collective;
};

struct JointCollective {
  std::string name;             // for messages: "all_reduce #3 on the default group"
  std::vector<size_t> members;  // indices into the ranks
  // >= 0: the transfer; else the longest of the members' ops' device_us (an
  // all_to_allv's members send different bytes; all end together).
  double transfer_us = -1;
  // The group size the arrival jitter is taken for; 0: members.size(). A
  // symmetric prediction's one member stands for N identical ranks
  // (--world-size N), which arrive like it, each with its own jitter.
  int64_t jitter_group = 0;
};

struct CollectiveOutcome {
  // When the last member was ready; with a SyncJitter, the expected latest
  // of the members' jittered arrivals (at least the latest predicted one).
  double start_us = 0;
  double end_us = 0;       // on every member
  double transfer_us = 0;  // the longest of the members' predicted times
  size_t last_rank = 0;    // the member the others waited for
  std::vector<double> ready_us;  // per member (the order of `members`)
};

struct JointResult {
  std::vector<SimResult> ranks;
  std::vector<CollectiveOutcome> collectives;
};

// Throws InputError when an op names a collective it is not a member of, a
// member never reaches a collective, or the ranks' orders of collectives
// cross (each would wait for the other: the job would hang).
// `keep_schedule`: each rank's SimResult::schedule too (timelines).
// `jitter`: how arrivals vary (predictors/comm/sync_jitter.h); a rank's
// variance grows with the time since it left its previous collective (or
// entered the iteration). Null or empty: arrivals as predicted.
JointResult simulateJoint(const std::vector<JointRank>& ranks,
                          const std::vector<JointCollective>& collectives,
                          bool keep_schedule = false, const SyncJitter* jitter = nullptr);

// The rank the others waited for: the one that waited least itself (ties:
// the one last to arrive where the others waited most). -1 when nobody waited.
int64_t stragglerOf(const std::vector<JointCollective>& collectives, const JointResult& result);

}  // namespace tracetwin::predictors
