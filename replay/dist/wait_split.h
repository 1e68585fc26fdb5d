// Splitting each collective's time into waiting for peers and transfer, from
// the timestamps every rank took around its calls (DESIGN.md, Multi-rank): a
// collective cannot start before its last member arrives, so on each rank
//   wait     = last arrival among the group's members - own arrival
//   transfer = own end - last arrival
// Each rank's timestamps are relative to its iteration's start (after a
// barrier). Ranks on one host share the monotonic clock, so their origins'
// absolute times put them on one timeline exactly; across hosts the barrier
// is the alignment (to its exit skew). Torch-free.
#pragma once

#include <string>
#include <vector>

namespace tracetwin::replay::dist {

struct CallMarks {
  double arrive_us = 0;  // before the collective was issued
  double end_us = 0;     // when it had completed on this rank
};

// What one rank measured in its measured iterations.
struct RankTimes {
  // Ranks with the same clock (one kernel: the boot id) compare absolute times.
  std::string host;
  std::vector<double> iterations_ms;
  // Per iteration: the origin on the host's monotonic clock (us).
  std::vector<double> origin_us;
  // [iteration][call]: one entry per collective call, in issue order.
  std::vector<std::vector<CallMarks>> calls;
  // Group of each call (as in the collective sequence; empty: default group).
  std::vector<std::string> call_groups;
};

struct CallSplit {
  double wait_us = 0;      // median over iterations
  double transfer_us = 0;  // median over iterations
  double wait_mean_us = 0;      // the means: what the calls add to a job's time on
  double transfer_mean_us = 0;  // a host that stalls some of them (docs/replay.md)
};

// Per iteration, the time covered by the calls' intervals (overlapping
// asynchronous collectives count once, so none exceeds the iteration), then
// the median over iterations.
struct RankSplit {
  double comm_ms = 0;      // [arrive, end] of every call
  double wait_ms = 0;      // [arrive, last arrival]
  double transfer_ms = 0;  // [last arrival, end]
  double wait_mean_ms = 0;  // the same two, means over iterations
  double transfer_mean_ms = 0;
  std::vector<CallSplit> calls;
};

struct StepTimes {
  std::vector<double> step_ms;  // per iteration: the slowest rank's time
  double step_ms_median = 0;
  double step_ms_mean = 0;
  int straggler = -1;  // the rank most often slowest (lowest rank on a tie)
  std::vector<RankSplit> ranks;
};

// Every rank's times -> the split. A call's peers are the ranks whose calls
// on the same group sit at the same position within that group. Throws
// InputError when ranks measured different iteration counts or a group's
// members made different numbers of calls (the sequence check prevents both).
StepTimes splitWaits(const std::vector<RankTimes>& ranks);

// A rank's times as text for the store exchange, and back (InputError naming
// `from` on a malformed text).
std::string rankTimesToText(const RankTimes& times);
RankTimes rankTimesFromText(const std::string& text, const std::string& from);

}  // namespace tracetwin::replay::dist
