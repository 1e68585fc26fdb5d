// Replays communication nodes (record_param_comms, c10d::*, gloo:/nccl:
// labels) through LibTorch's c10d: on a one-rank process group, or on the
// groups of a distributed replay (one process per rank). Gloo on CPU, NCCL on
// CUDA. Replay-private: includes ATen, so only replay/ sources include it.
#pragma once

#include <ATen/ATen.h>

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/graph.h"
#include "replay/comm/collective_names.h"

namespace tracetwin::replay::comm {

struct CommGroups;  // replay/comm/c10d_backend.h

// Told around every collective a replay issues ("wait" records excepted):
// the distributed replay's timing of arrival and completion per rank.
class CollectiveObserver {
 public:
  virtual ~CollectiveObserver() = default;
  // Before it is issued; returns an id for the completion.
  virtual size_t arrive(const core::Node& node, Collective kind) = 0;
  // Right after it was issued and waited for on the issuing thread (for
  // NCCL the wait orders the current stream after it: a device-side mark).
  virtual void complete(size_t call) = 0;
  // When an asynchronous collective completed, from the backend's thread.
  virtual void completedAt(size_t call, std::chrono::steady_clock::time_point when) = 0;
};

class CommReplayer {
 public:
  // device: "cpu" (Gloo) or "cuda" / "cuda:N" (NCCL). Throws UsageError for
  // another device string and UnavailableError when the backend is missing
  // from this build or the GPU is absent. Creating the group probes which
  // collectives the backend implements (1-element tensors, ~1 ms).
  static std::unique_ptr<CommReplayer> create(const std::string& device);
  // On the groups of a distributed replay. Every rank calls it at the same
  // point: the probe of `kinds` (the collectives the traces use) runs on the
  // world group.
  static std::unique_ptr<CommReplayer> createDistributed(std::shared_ptr<CommGroups> groups,
                                                         const std::set<Collective>& kinds);
  ~CommReplayer();
  CommReplayer(const CommReplayer&) = delete;
  CommReplayer& operator=(const CommReplayer&) = delete;

  // False, with the reason, when `node` cannot be replayed here: on one rank,
  // a collective of a wider group ("needs distributed replay: ..."); on any
  // group, one the backend cannot run or whose group is not known.
  bool canReplay(const core::Node& node, std::string* reason) const;

  // Runs the node's collective and waits for it. `tensors` are the node's
  // input tensors, flattened in order (undefined ones may be among them; the
  // payload is picked out of them, see CollectiveSpec::payload_arg). Returns the tensors that hold
  // the result, flattened like the node's outputs (the inputs themselves for
  // in-place collectives; new tensors, reused across iterations, for gathers
  // and all_to_all). Throws RuntimeFailure naming the node when c10d fails.
  std::vector<at::Tensor> replay(const core::Node& node, const std::vector<at::Tensor>& tensors);

  const std::string& backendName() const;  // "gloo" or "nccl"
  // What the probe found, one line each, for the replay report: collectives
  // the backend cannot run and those issued another way.
  std::vector<std::string> backendNotes() const;
  // Not owned; nullptr: none.
  void setObserver(CollectiveObserver* observer);
  // Split sizes (elements) for an all_to_all_single whose trace records none
  // (core::comm::deriveAllToAllSplits); before the node is first replayed.
  void setSplitSizes(core::NodeId node, std::vector<int64_t> in_split,
                     std::vector<int64_t> out_split);

  // Gloo collectives of a distributed replay run asynchronously, as
  // DistributedDataParallel issues its gradient all-reduces while backward
  // goes on: replay() returns once one is issued, and the replay waits for
  // it before the first op that touches its tensors (waitForTensors) and at
  // the end of each iteration (waitAll). NCCL needs none of this: its wait
  // only orders the device stream.
  bool hasPending() const;
  // Returns how many collectives it waited for.
  size_t waitForTensors(const std::vector<at::Tensor>& tensors);
  void waitAll();

 private:
  struct Impl;
  explicit CommReplayer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracetwin::replay::comm
