// The order of collectives a rank's trace will issue, and the check that
// every rank of a group issues the same ones: ranks that disagree would
// deadlock (NCCL) or time out (Gloo) inside the measured loop, so the
// sequences are exchanged and compared before anything runs. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.h"

namespace tracetwin::core::comm {

struct CollectiveStep {
  core::NodeId node = core::kNoNode;
  std::string name;   // canonical: "all_reduce", "all_to_all_single" ...
  std::string group;  // recorded process-group name; empty: the default (world) group
  // Bytes of the node's tensors; -1 where ranks legitimately differ (an
  // all_to_all with split sizes sends what each rank has).
  int64_t bytes = 0;
};

// The collectives among `ops` (selected op ids, in execution order). "wait"
// records are skipped: they complete a collective locally. A node that
// records no known collective is left out too (its replay reports why).
std::vector<CollectiveStep> collectiveSequence(const core::Graph& graph,
                                               const std::vector<core::NodeId>& ops);

// One line per step, for the exchange through the rendezvous store.
std::string sequenceToText(const std::vector<CollectiveStep>& steps);
// Throws InputError naming `from` (e.g. "rank 3") on a malformed text.
std::vector<CollectiveStep> sequenceFromText(const std::string& text, const std::string& from);

// Empty when every rank issues the same collectives on each group; else one
// sentence naming the first rank that differs from the group's lowest rank,
// the position, and both collectives.
std::string firstSequenceMismatch(const std::vector<std::vector<CollectiveStep>>& by_rank);

// One collective of a job: the same position on the same group in every
// member's sequence (how the ranks' collectives pair up at run time).
struct MatchedCollective {
  std::string name;            // canonical
  std::string group;           // empty: the default (world) group
  int64_t position = 0;        // among the group's collectives
  std::vector<int> members;    // ranks, ascending
  // Per member: its step, and the step's index in that rank's sequence.
  std::vector<CollectiveStep> steps;
  std::vector<size_t> index_in_rank;
};

// Pairs the ranks' collectives: a named group's members are the ranks that
// issue collectives on it, the default group every rank. In the order of
// first appearance. Throws InputError with firstSequenceMismatch's sentence
// when the ranks disagree on a group.
std::vector<MatchedCollective> matchAcrossRanks(
    const std::vector<std::vector<CollectiveStep>>& by_rank);

}  // namespace tracetwin::core::comm
