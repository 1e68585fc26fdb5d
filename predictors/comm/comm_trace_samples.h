// Communication samples from the Kineto traces of every rank of a recorded
// job (`tracetwin fit` with `{rank}` paths): each collective matched across
// the ranks (core/comm/collective_sequence.h); its kernel on the rank that
// arrived last is the transfer, and on every other rank it also holds that
// rank's wait for the last one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/kineto/linker.h"
#include "predictors/comm/comm_fit.h"

namespace tracetwin::predictors {

struct LinkedRank {
  const core::Graph* graph = nullptr;
  const core::kineto::LinkedTimeline* linked = nullptr;
};

struct CollectiveSplit {
  std::string name;
  std::string group;
  int64_t position = 0;
  int64_t group_size = 0;
  double bytes = 0;              // message bytes, as the predictor reads them
  int64_t last_rank = -1;        // the member that arrived last
  double transfer_us = 0;        // its kernel
  std::vector<int> members;
  std::vector<double> kernel_us;  // per member: its kernel (wait + transfer)
};

struct CommTraceSamples {
  std::vector<CommSample> samples;  // one per collective: the transfer
  std::vector<CollectiveSplit> collectives;
  // "start": the ranks share a clock (their kernels of one collective end
  // together) and the last to start arrived last; "shortest": otherwise,
  // the shortest kernel stands for the last arrival.
  std::string last_by;
  std::vector<std::string> notes;  // collectives left out and why
};

// `ranks[i]` is rank i. Throws InputError when the ranks' collectives differ
// (not one job).
CommTraceSamples commSamplesFromRanks(const std::vector<LinkedRank>& ranks);

}  // namespace tracetwin::predictors
