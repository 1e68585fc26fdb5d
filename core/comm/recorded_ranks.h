// Whether the rank traces of a job say they are: each record_param_comms
// records the recording process's rank in its group, the group's size and
// (schema 1.0.3+) the group's global ranks and all_to_all split sizes. A
// copied trace in another rank's slot, a subset of a job's ranks, or traces of
// two jobs issue the same collectives in the same order, so the sequence check
// passes them; these records do not. The prediction of such a "job" would be
// of one that cannot run, and its replay dies inside the backend (Gloo's
// alltoallv enforce, an NCCL hang). Torch-free.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/comm/collective_sequence.h"

namespace tracetwin::core::comm {

// Empty when every matched collective's records fit the ranks that issue it;
// else one sentence naming the collective, the rank and op, what the trace
// records and what its place in the job implies. Checks, in this order over
// the whole job (a copied trace shows first as a wrong rank):
// - the recorded group rank: from the group's recorded global ranks (start +
//   rank * stride) where recorded, else the member's position when the
//   recorded group size equals the members';
// - the recorded group size against the members that issue the collective
//   (on the default group only when larger: schemas before 1.0.3 do not name
//   groups, so a subgroup's collectives look like the default group's);
// - all_to_all split sizes: what a rank sends to each peer is what that peer
//   expects from it.
// `rank_count` is the job's number of ranks (the traces).
std::string firstRecordContradiction(const std::vector<MatchedCollective>& matched,
                                     size_t rank_count);

}  // namespace tracetwin::core::comm
