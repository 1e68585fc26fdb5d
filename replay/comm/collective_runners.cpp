#include "replay/comm/collective_runners.h"

#include <map>
#include <numeric>

namespace tracetwin::replay::comm {

at::Tensor OutputCache::get(int64_t node, size_t slot, at::IntArrayRef sizes,
                            const at::TensorOptions& options) {
  at::Tensor& t = tensors_[{node, slot}];
  if (!t.defined() || t.sizes() != sizes || t.dtype() != options.dtype() ||
      t.device() != options.device()) {
    t = at::empty(sizes, options);
  }
  return t;
}

namespace {

using TensorList = std::vector<at::Tensor>;

// A collective is waited on where it is issued, unless the caller takes its
// work to wait later (RunContext::deferred).
void run(RunContext& ctx, const WorkHandle& work) {
  if (ctx.deferred) {
    ctx.deferred->push_back(work);
  } else {
    work->wait();
  }
}

int64_t groupSize(RunContext& ctx) { return ctx.group.getSize(); }

// Lists are issued one tensor per call: c10d requires the tensors of one call
// to share size and type, which the traces do not promise (in the sample
// traces every list holds one tensor, so the call count is unchanged).
TensorList broadcast(RunContext& ctx) {
  for (const at::Tensor& t : ctx.inputs) {
    TensorList one{t};
    run(ctx, ctx.group.broadcast(one, c10d::BroadcastOptions{}));
  }
  return ctx.inputs;
}

TensorList allReduce(RunContext& ctx) {
  for (const at::Tensor& t : ctx.inputs) {
    TensorList one{t};
    run(ctx, ctx.group.allreduce(one, c10d::AllreduceOptions{}));
  }
  return ctx.inputs;
}

TensorList reduce(RunContext& ctx) {
  for (const at::Tensor& t : ctx.inputs) {
    TensorList one{t};
    run(ctx, ctx.group.reduce(one, c10d::ReduceOptions{}));
  }
  return ctx.inputs;
}

// all_gather and gather: each input tensor receives one output per rank.
// `issue` starts the collective on (per-rank outputs, the input).
template <typename Issue>
TensorList gatherPerRank(RunContext& ctx, Issue issue) {
  TensorList results;
  size_t slot = 0;
  for (const at::Tensor& t : ctx.inputs) {
    std::vector<TensorList> out(1);
    for (int64_t r = 0; r < groupSize(ctx); ++r) {
      out[0].push_back(ctx.outputs.get(ctx.node, slot++, t.sizes(), t.options()));
    }
    TensorList in{t};
    run(ctx, issue(out, in));
    results.insert(results.end(), out[0].begin(), out[0].end());
  }
  return results;
}

TensorList allGather(RunContext& ctx) {
  return gatherPerRank(ctx, [&](std::vector<TensorList>& out, TensorList& in) {
    return ctx.group.allgather(out, in, c10d::AllgatherOptions{});
  });
}

TensorList allGatherIntoTensor(RunContext& ctx) {
  TensorList results;
  size_t slot = 0;
  for (at::Tensor t : ctx.inputs) {
    at::Tensor out = ctx.outputs.get(ctx.node, slot++, {t.numel() * groupSize(ctx)}, t.options());
    run(ctx, ctx.group._allgather_base(out, t, c10d::AllgatherOptions{}));
    results.push_back(out);
  }
  return results;
}

// One input list per call: a list of group-size tensors, or one tensor split
// into group-size chunks along dim 0.
std::vector<TensorList> scatterChunks(RunContext& ctx) {
  const int64_t g = groupSize(ctx);
  if (static_cast<int64_t>(ctx.inputs.size()) == g) return {ctx.inputs};
  std::vector<TensorList> chunks;
  for (const at::Tensor& t : ctx.inputs) chunks.push_back(t.flatten().chunk(g));
  return chunks;
}

TensorList reduceScatter(RunContext& ctx) {
  TensorList results;
  size_t slot = 0;
  for (TensorList& chunks : scatterChunks(ctx)) {
    TensorList out{ctx.outputs.get(ctx.node, slot++, chunks[0].sizes(), chunks[0].options())};
    std::vector<TensorList> in{chunks};
    run(ctx, ctx.group.reduce_scatter(out, in, c10d::ReduceScatterOptions{}));
    results.push_back(out[0]);
  }
  return results;
}

TensorList reduceScatterTensor(RunContext& ctx) {
  TensorList results;
  size_t slot = 0;
  for (at::Tensor t : ctx.inputs) {
    at::Tensor out = ctx.outputs.get(ctx.node, slot++, {t.numel() / groupSize(ctx)}, t.options());
    run(ctx, ctx.group._reduce_scatter_base(out, t, c10d::ReduceScatterOptions{}));
    results.push_back(out);
  }
  return results;
}

TensorList allToAllSingle(RunContext& ctx) {
  TensorList results;
  size_t slot = 0;
  for (at::Tensor t : ctx.inputs) {
    std::vector<int64_t> in_split = ctx.spec.in_split;
    std::vector<int64_t> out_split = ctx.spec.out_split;
    std::vector<int64_t> sizes = t.sizes().vec();
    if (!out_split.empty() && !sizes.empty()) {
      sizes[0] = std::accumulate(out_split.begin(), out_split.end(), int64_t{0});
    }
    at::Tensor out = ctx.outputs.get(ctx.node, slot++, sizes, t.options());
    run(ctx, ctx.group.alltoall_base(out, t, out_split, in_split, c10d::AllToAllOptions{}));
    results.push_back(out);
  }
  return results;
}

TensorList allToAll(RunContext& ctx) {
  TensorList in = ctx.inputs;
  TensorList out;
  for (size_t i = 0; i < in.size(); ++i) {
    out.push_back(ctx.outputs.get(ctx.node, i, in[i].sizes(), in[i].options()));
  }
  run(ctx, ctx.group.alltoall(out, in, c10d::AllToAllOptions{}));
  return out;
}

// Gloo and NCCL take the outputs of gather (the inputs of scatter) on the
// root alone: a non-root rank that passes them fails while the root waits.
TensorList gather(RunContext& ctx) {
  const bool root = ctx.group.getRank() == 0;
  TensorList results;
  size_t slot = 0;
  for (const at::Tensor& t : ctx.inputs) {
    std::vector<TensorList> out;
    if (root) {
      out.emplace_back();
      for (int64_t r = 0; r < groupSize(ctx); ++r) {
        out[0].push_back(ctx.outputs.get(ctx.node, slot++, t.sizes(), t.options()));
      }
    }
    TensorList in{t};
    run(ctx, ctx.group.gather(out, in, c10d::GatherOptions{}));
    if (root) results.insert(results.end(), out[0].begin(), out[0].end());
  }
  return results;
}

TensorList scatter(RunContext& ctx) {
  const bool root = ctx.group.getRank() == 0;
  TensorList results;
  size_t slot = 0;
  for (TensorList& chunks : scatterChunks(ctx)) {
    TensorList out{ctx.outputs.get(ctx.node, slot++, chunks[0].sizes(), chunks[0].options())};
    std::vector<TensorList> in;
    if (root) in.push_back(chunks);
    run(ctx, ctx.group.scatter(out, in, c10d::ScatterOptions{}));
    results.push_back(out[0]);
  }
  return results;
}

// The same collective through the list API, on views of one output tensor:
// for backends without the *_base entry points (Gloo in LibTorch 1.13 has no
// _allgather_base). Same bytes on the wire, so the replay stays faithful.
TensorList allGatherIntoTensorViaList(RunContext& ctx) {
  TensorList results;
  size_t slot = 0;
  for (const at::Tensor& t : ctx.inputs) {
    at::Tensor out = ctx.outputs.get(ctx.node, slot++, {t.numel() * groupSize(ctx)}, t.options());
    std::vector<TensorList> views{out.chunk(groupSize(ctx))};
    TensorList in{t.flatten()};
    run(ctx, ctx.group.allgather(views, in, c10d::AllgatherOptions{}));
    results.push_back(out);
  }
  return results;
}

TensorList reduceScatterTensorViaList(RunContext& ctx) {
  TensorList results;
  size_t slot = 0;
  for (const at::Tensor& t : ctx.inputs) {
    at::Tensor out = ctx.outputs.get(ctx.node, slot++, {t.numel() / groupSize(ctx)}, t.options());
    TensorList outs{out};
    std::vector<TensorList> in{t.flatten().chunk(groupSize(ctx))};
    run(ctx, ctx.group.reduce_scatter(outs, in, c10d::ReduceScatterOptions{}));
    results.push_back(out);
  }
  return results;
}

// reduce_scatter as the traffic it is: rank i sends chunk j to rank j (an
// all_to_all_single of the flat input, (p-1)/p n bytes out per rank as in a
// ring), then sums what it received. Gloo in LibTorch 1.13 implements no
// reduce_scatter; the bytes on the wire and the result are the same.
at::Tensor reduceScatterOneViaAllToAll(RunContext& ctx, at::Tensor flat, size_t slot) {
  const int64_t g = groupSize(ctx);
  at::Tensor received = ctx.outputs.get(ctx.node, slot, {flat.numel()}, flat.options());
  std::vector<int64_t> even;  // no split sizes: equal chunks
  // The local sum needs what arrived: wait here even for an async caller.
  ctx.group.alltoall_base(received, flat, even, even, c10d::AllToAllOptions{})->wait();
  return received.view({g, flat.numel() / g}).sum(0);
}

TensorList reduceScatterViaAllToAll(RunContext& ctx) {
  TensorList results;
  size_t slot = 0;
  for (TensorList& chunks : scatterChunks(ctx)) {
    results.push_back(reduceScatterOneViaAllToAll(ctx, at::cat(chunks).flatten(), slot++));
  }
  return results;
}

TensorList reduceScatterTensorViaAllToAll(RunContext& ctx) {
  TensorList results;
  size_t slot = 0;
  for (const at::Tensor& t : ctx.inputs) {
    results.push_back(reduceScatterOneViaAllToAll(ctx, t.flatten(), slot++));
  }
  return results;
}

// all_to_all of lists (Gloo in 1.13 has only the single-tensor form): the
// list concatenated, sent as one all_to_all_single with one split per peer,
// and the received rows cut back into the list's shapes. Same bytes.
TensorList allToAllViaSingle(RunContext& ctx) {
  TensorList flat;
  std::vector<int64_t> splits;
  for (const at::Tensor& t : ctx.inputs) {
    flat.push_back(t.flatten());
    splits.push_back(t.numel());
  }
  at::Tensor send = at::cat(flat);
  at::Tensor received = ctx.outputs.get(ctx.node, 0, send.sizes(), send.options());
  run(ctx, ctx.group.alltoall_base(received, send, splits, splits, c10d::AllToAllOptions{}));
  TensorList out;
  int64_t at_row = 0;
  for (const at::Tensor& t : ctx.inputs) {
    out.push_back(received.narrow(0, at_row, t.numel()).view(t.sizes()));
    at_row += t.numel();
  }
  return out;
}

TensorList barrier(RunContext& ctx) {
  run(ctx, ctx.group.barrier(c10d::BarrierOptions{}));
  return {};
}

// The recorded "wait" completes a collective this replay already waited for.
TensorList waitNoOp(RunContext&) { return {}; }

struct RunnerEntry {
  Collective kind;
  CollectiveRunner runner;
};

constexpr RunnerEntry kRunners[] = {
    {Collective::kBroadcast, broadcast},
    {Collective::kAllReduce, allReduce},
    {Collective::kReduce, reduce},
    {Collective::kAllGather, allGather},
    {Collective::kAllGatherIntoTensor, allGatherIntoTensor},
    {Collective::kReduceScatter, reduceScatter},
    {Collective::kReduceScatterTensor, reduceScatterTensor},
    {Collective::kAllToAll, allToAll},
    {Collective::kAllToAllSingle, allToAllSingle},
    {Collective::kGather, gather},
    {Collective::kScatter, scatter},
    {Collective::kBarrier, barrier},
    {Collective::kWait, waitNoOp},
};

// In order of preference, per kind.
constexpr RunnerEntry kFallbackRunners[] = {
    {Collective::kAllGatherIntoTensor, allGatherIntoTensorViaList},
    {Collective::kReduceScatterTensor, reduceScatterTensorViaList},
    {Collective::kReduceScatterTensor, reduceScatterTensorViaAllToAll},
    {Collective::kReduceScatter, reduceScatterViaAllToAll},
    {Collective::kAllToAll, allToAllViaSingle},
};

template <size_t N>
CollectiveRunner lookUp(const RunnerEntry (&table)[N], Collective kind) {
  for (const RunnerEntry& e : table) {
    if (e.kind == kind) return e.runner;
  }
  return nullptr;
}

}  // namespace

CollectiveRunner findRunner(Collective kind) { return lookUp(kRunners, kind); }
std::vector<FallbackRunner> findFallbackRunners(Collective kind) {
  static const std::map<CollectiveRunner, const char*> kHow = {
      {allGatherIntoTensorViaList, "the list API on views"},
      {reduceScatterTensorViaList, "the list API on views"},
      {reduceScatterTensorViaAllToAll, "all_to_all_single of the chunks and a local sum"},
      {reduceScatterViaAllToAll, "all_to_all_single of the chunks and a local sum"},
      {allToAllViaSingle, "one all_to_all_single of the concatenated list"},
  };
  std::vector<FallbackRunner> out;
  for (const RunnerEntry& e : kFallbackRunners) {
    if (e.kind == kind) out.push_back({e.runner, kHow.at(e.runner)});
  }
  return out;
}

}  // namespace tracetwin::replay::comm
