#include "replay/comm/collective_runners.h"

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

// Every collective is waited on where it is issued: a one-rank replay has no
// peer to overlap with, and the op's time must include its communication.
template <typename Work>
void run(const c10::intrusive_ptr<Work>& work) {
  work->wait();
}

int64_t groupSize(RunContext& ctx) { return ctx.group.getSize(); }

// Lists are issued one tensor per call: c10d requires the tensors of one call
// to share size and type, which the traces do not promise (in the sample
// traces every list holds one tensor, so the call count is unchanged).
TensorList broadcast(RunContext& ctx) {
  for (const at::Tensor& t : ctx.inputs) {
    TensorList one{t};
    run(ctx.group.broadcast(one, c10d::BroadcastOptions{}));
  }
  return ctx.inputs;
}

TensorList allReduce(RunContext& ctx) {
  for (const at::Tensor& t : ctx.inputs) {
    TensorList one{t};
    run(ctx.group.allreduce(one, c10d::AllreduceOptions{}));
  }
  return ctx.inputs;
}

TensorList reduce(RunContext& ctx) {
  for (const at::Tensor& t : ctx.inputs) {
    TensorList one{t};
    run(ctx.group.reduce(one, c10d::ReduceOptions{}));
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
    run(issue(out, in));
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
    run(ctx.group._allgather_base(out, t, c10d::AllgatherOptions{}));
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
    run(ctx.group.reduce_scatter(out, in, c10d::ReduceScatterOptions{}));
    results.push_back(out[0]);
  }
  return results;
}

TensorList reduceScatterTensor(RunContext& ctx) {
  TensorList results;
  size_t slot = 0;
  for (at::Tensor t : ctx.inputs) {
    at::Tensor out = ctx.outputs.get(ctx.node, slot++, {t.numel() / groupSize(ctx)}, t.options());
    run(ctx.group._reduce_scatter_base(out, t, c10d::ReduceScatterOptions{}));
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
    run(ctx.group.alltoall_base(out, t, out_split, in_split, c10d::AllToAllOptions{}));
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
  run(ctx.group.alltoall(out, in, c10d::AllToAllOptions{}));
  return out;
}

TensorList gather(RunContext& ctx) {
  return gatherPerRank(ctx, [&](std::vector<TensorList>& out, TensorList& in) {
    return ctx.group.gather(out, in, c10d::GatherOptions{});
  });
}

TensorList scatter(RunContext& ctx) {
  TensorList results;
  size_t slot = 0;
  for (TensorList& chunks : scatterChunks(ctx)) {
    TensorList out{ctx.outputs.get(ctx.node, slot++, chunks[0].sizes(), chunks[0].options())};
    std::vector<TensorList> in{chunks};
    run(ctx.group.scatter(out, in, c10d::ScatterOptions{}));
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
    run(ctx.group.allgather(views, in, c10d::AllgatherOptions{}));
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
    run(ctx.group.reduce_scatter(outs, in, c10d::ReduceScatterOptions{}));
    results.push_back(out);
  }
  return results;
}

TensorList barrier(RunContext& ctx) {
  run(ctx.group.barrier(c10d::BarrierOptions{}));
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

constexpr RunnerEntry kFallbackRunners[] = {
    {Collective::kAllGatherIntoTensor, allGatherIntoTensorViaList},
    {Collective::kReduceScatterTensor, reduceScatterTensorViaList},
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
CollectiveRunner findFallbackRunner(Collective kind) { return lookUp(kFallbackRunners, kind); }

}  // namespace tracetwin::replay::comm
