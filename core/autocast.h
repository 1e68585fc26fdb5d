// Ops that ran under torch.autocast, as the execution trace shows them.
//
// Autocast is a dispatch key in front of the op: the op is recorded with the
// arguments the model passed (an fp32 input and fp32 weights) and the output
// the autocast kernel produced (bf16), and below it, as children, the casts
// that autocast's cached_cast made (`aten::to`, one per input it changed)
// and the op called again with the cast tensors, the autocast key excluded:
//
//   aten::linear (x fp32, W fp32, b fp32) -> y bf16
//     aten::to (b, 15) -> b' bf16   aten::to (W, 15) -> W' bf16   aten::to (x, 15) -> x' bf16
//     aten::linear (x', W', b') -> y bf16
//
// Called again with its recorded arguments outside autocast, the op runs in
// fp32 and produces fp32 (a 1.8-9x slower replay of the bf16 MLP, and every
// op after it sees the wrong dtype: "expected scalar type BFloat16 but found
// Float"). The casts also make tensors that later ops read: the bf16 weight
// copy that the backward's mm reads, and the copies autocast caches per step
// (a weight used twice is cast once: the second op has no cast child and its
// inner call reads the first op's copy). Torch-free: prediction uses it to
// know an op's compute dtype.
#pragma once

#include <optional>
#include <vector>

#include "core/graph.h"

namespace tracetwin::core {

struct AutocastCall {
  NodeId inner = kNoNode;    // the op called again with the cast tensors
  std::vector<NodeId> casts;  // aten::to / aten::_to_copy children, in order
};

// The autocast structure under operator `node`: exactly one child with the
// node's own name and schema (the inner call), every other child a cast of
// one of the node's input tensors to another floating dtype, and the inner
// call's input tensors not all the node's own (else the node is its own
// inner call: nothing was cast). nullopt otherwise.
std::optional<AutocastCall> findAutocastCall(const Graph& graph, const Node& node);

// The ops to replay for `ops` (selected top-level ops): each op whose own
// subtree holds an autocast call below it, without being one itself, is
// replaced by its children, recursively, until every op is an autocast call
// or holds none; labels inside ops are looked through. On CUDA,
// cross_entropy_loss (not on autocast's lists) calls nll_loss (on its fp32
// list) three levels down: replayed as recorded, outside autocast, it
// computed in bf16 and gave bf16 where fp32 was recorded, and the backward's
// nll_loss_backward then failed on the dtype (an H100 capture, PyTorch 2.11).
// Replaying its children runs the cast autocast made. `expanded` (optional)
// receives the ids replaced, in order.
std::vector<NodeId> expandNestedAutocast(const Graph& graph, const std::vector<NodeId>& ops,
                                         std::vector<NodeId>* expanded = nullptr);

// The dtype the op computes in: that of the first floating input tensor of
// its inner autocast call when it has one, else of its own first floating
// input tensor; kUnknown when it has none.
DType computeDtype(const Graph& graph, const Node& node);

}  // namespace tracetwin::core
