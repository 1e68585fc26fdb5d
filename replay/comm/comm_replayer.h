// Replays communication nodes (record_param_comms, c10d::*) through LibTorch's
// c10d on a one-rank process group: Gloo on CPU, NCCL on CUDA. Replay-private:
// includes ATen, so only replay/ sources include it.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include "core/graph.h"

namespace tracetwin::replay::comm {

class CommReplayer {
 public:
  // device: "cpu" (Gloo) or "cuda" / "cuda:N" (NCCL). Throws UsageError for
  // another device string and UnavailableError when the backend is missing
  // from this build or the GPU is absent. Creating the group probes which
  // collectives the backend implements (1-element tensors, ~1 ms).
  static std::unique_ptr<CommReplayer> create(const std::string& device);
  ~CommReplayer();
  CommReplayer(const CommReplayer&) = delete;
  CommReplayer& operator=(const CommReplayer&) = delete;

  // False, with the reason, when a one-rank replay of `node` would not
  // reproduce it ("needs distributed replay: ..." when the traced group had
  // more than one rank) or the backend cannot run it.
  bool canReplay(const core::Node& node, std::string* reason) const;

  // Runs the node's collective and waits for it. `tensors` are the node's
  // defined input tensors, flattened in order. Returns the tensors that hold
  // the result, flattened like the node's outputs (the inputs themselves for
  // in-place collectives; new tensors, reused across iterations, for gathers
  // and all_to_all). Throws RuntimeFailure naming the node when c10d fails.
  std::vector<at::Tensor> replay(const core::Node& node, const std::vector<at::Tensor>& tensors);

  const std::string& backendName() const;  // "gloo" or "nccl"
  // What the probe found, one line each, for the replay report: collectives
  // the backend cannot run and those issued another way.
  std::vector<std::string> backendNotes() const;

 private:
  struct Impl;
  explicit CommReplayer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracetwin::replay::comm
