// Which process group each recorded collective runs on in a distributed
// replay, and which groups a rank must create. Traces from schema 1.1.0 name
// a collective's group (pg_name) and its members (global_rank_start,
// global_rank_stride, pg_size); older ones record at most its size, and
// PyTorch 1.13's c10d ops nothing. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/comm/collective_spec.h"

namespace tracetwin::core::comm {

struct GroupLayout {
  int rank = 0;
  int world_size = 1;
  // The same trace on every rank (a path without {rank}): a data-parallel
  // job emulated at another size, so every collective runs on the world.
  bool same_trace = false;
};

struct RecordedGroup {
  std::string name;        // pg_name
  std::vector<int> ranks;  // global ranks, ascending
};

struct GroupChoice {
  std::string group;    // empty: the world group; else a RecordedGroup's name
  std::string refusal;  // non-empty: the collective cannot run, and why
};

// The group `node` (whose collective is `spec`) runs on.
GroupChoice chooseGroup(const core::Node& node, const CollectiveSpec& spec,
                        const GroupLayout& layout);

// The groups other than the world that the collectives among `ops` name and
// this rank belongs to, sorted by name (every member creates them in the
// same order, so creation cannot deadlock). Throws InputError when one name
// is recorded with two different memberships.
std::vector<RecordedGroup> groupsToCreate(const core::Graph& graph,
                                          const std::vector<core::NodeId>& ops,
                                          const GroupLayout& layout);

// all_to_all_single split sizes for a group of `group_size` when the trace
// recorded them for another size (a job emulated at another size): dim 0 of
// `rows` spread as evenly as the peers spread theirs. Empty when the
// recorded splits already fit.
struct Splits {
  std::vector<int64_t> in, out;
};
Splits resplitAllToAll(const CollectiveSpec& spec, int64_t rows, int group_rank, int group_size);

}  // namespace tracetwin::core::comm
