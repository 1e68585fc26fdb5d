// The order of collectives a rank's trace will issue, and the check that
// every rank of a group issues the same ones: ranks that disagree would
// deadlock (NCCL) or time out (Gloo) inside the measured loop, so the
// sequences are exchanged and compared before anything runs. Torch-free.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
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
  // Run by autograd's backward (an ancestor named "...Backward"): how an
  // all_to_all_single without split sizes is paired with its forward
  // (deriveAllToAllSplits).
  bool backward = false;
  // What the trace records about the group and this rank's place in it, for
  // the check that the traces are the ranks of one job (-1 / empty: not
  // recorded): the recording rank within the group, the group's size
  // (recorded, or the length of the split sizes), its global ranks as
  // start + k * stride, and all_to_all split sizes (dim-0 rows sent to /
  // received from each member).
  int64_t group_rank = -1;
  int64_t group_size = -1;
  int64_t global_rank_start = -1;
  int64_t global_rank_stride = -1;
  std::vector<int64_t> in_split{}, out_split{};
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
// first appearance. Throws InputError with firstSequenceMismatch's or
// firstRecordContradiction's (core/comm/recorded_ranks.h) sentence when the
// ranks disagree on a group or their records contradict their places.
std::vector<MatchedCollective> matchAcrossRanks(
    const std::vector<std::vector<CollectiveStep>>& by_rank);
// The pairing alone, for sequences firstSequenceMismatch accepted.
std::vector<MatchedCollective> pairAcrossRanks(
    const std::vector<std::vector<CollectiveStep>>& by_rank);

// Split sizes (elements) of one all_to_all_single, derived across ranks.
struct DerivedSplits {
  std::vector<int64_t> in_split, out_split;
};

// PyTorch 1.13's Gloo records an all_to_all_single with explicit split sizes
// as a bare "gloo:all_to_all" holding the send tensor only: each rank's
// trace has its own send size and no splits, and a rank that sends nothing
// (a DLRM rank without tables) records 0 bytes. The splits follow from the
// peers' send sizes (the exchanged sequences) for the common pattern, the
// all_to_all of pooled embeddings and its backward:
// - forward (no "...Backward" ancestor): every rank sends equal chunks to
//   every peer (its samples' share of its vectors): in = [N_me / G] x G,
//   out[q] = N_q / G;
// - backward: the transpose of the latest forward on the group not yet
//   paired (autograd runs them in reverse): in = forward's out, out =
//   forward's in; its send size must equal the sum.
// Returns, for `rank`'s steps of that kind, the splits by node id where
// they are uneven; `elements_of(node, bytes)` converts a member's bytes to
// elements (the rank's own dtype). Throws InputError naming the collective
// when a size does not fit (not a multiple of the group, a backward without
// its forward, a sum that differs). Even splits (what a replay without
// splits does already) are left out.
std::map<core::NodeId, DerivedSplits> deriveAllToAllSplits(
    const std::vector<std::vector<CollectiveStep>>& by_rank, int rank,
    const std::function<int64_t(core::NodeId node, int64_t bytes)>& elements_of);

}  // namespace tracetwin::core::comm
