// The step, op by op, in the order PyTorch 1.13 runs and records it
// (scripts/workloads/dlrm_sweep.py captured with capture.py --nproc 2):
// zero_grad, the tables' embedding_bag, the all_to_all of pooled vectors,
// the dense forward, BCE, autograd's backward (the top MLP, the
// interaction's CatBackward, the bottom MLP, the all_to_all of gradients,
// embedding_bag backward and AccumulateGrad per table), the all-reduce of
// the dense gradients in one flat bucket, SGD.
#include "sweep/step_builder.h"

#include <fmt/core.h>

#include <cmath>
#include <map>
#include <numeric>

#include "core/aten_schemas.h"
#include "core/errors.h"

namespace tracetwin::sweep {

StepBuilder::StepBuilder(const SweepSpec& spec, const std::vector<Placement>& place, int rank)
    : s_(spec), rank_(rank), B_(spec.batch_size), W_(spec.world_size) {
  shards_ = planShards(spec, place);
  dims_.assign(size_t(W_), 0);
  block_shards_.assign(size_t(W_), {});
  for (size_t k = 0; k < shards_.size(); ++k) {
    const Shard& sh = shards_[k];
    if (sh.kind == Sharding::kRowWise) has_row_wise_ = true;
    if (sh.kind != Sharding::kDataParallel) {
      dims_[size_t(sh.rank)] += sh.dim;
      block_shards_[size_t(sh.rank)].push_back(int(k));
    }
    if (sh.rank != rank) continue;
    local_.push_back(int(k));
    (sh.kind == Sharding::kDataParallel ? dp_ : mine_).push_back(local_.size() - 1);
  }
  for (const TableSpec& t : spec.tables) table_dims_ += t.dim;
}

RankStep StepBuilder::build() {
  makeParameters();
  part_ = StepPart::kDense;
  // Optimizer.zero_grad: record_function's handle, then every grad.
  op(kZeros, {W::ints({1}), W::none(), W::none(), w_.device(), W::b(false)},
     {w_.arg(w_.tensor({1}))});
  emptyBytes();
  for (Linear& l : layers_) {
    zero(l.weight_grad);
    zero(l.bias_grad);
  }
  for (size_t k = 0; k < local_.size(); ++k) {
    shardIs(k);
    zero(grads_[k]);
  }
  notShard();
  forward();
  backward();
  allReduce();
  optimizerStep();
  RankStep out;
  out.trace = w_.finish();
  out.tags = std::move(tags_);
  return out;
}

// The ops that follow are local shard k's (an embedding op), or no shard's.
void StepBuilder::shardIs(size_t k) {
  part_ = StepPart::kEmbedding;
  shard_ = local_[k];
  table_ = shards_[size_t(shard_)].table;
}

void StepBuilder::notShard(int table) {
  table_ = table;
  shard_ = -1;
}

void StepBuilder::emptyBytes() {
  // record_function's 288-byte handle (uint8) around zero_grad and step.
  EtTensor h = w_.tensor({288});
  h.itemsize = 1;
  h.type = "Tensor(unsigned char)";
  op(kEmpty, {W::ints({288}), W::i(0), W::none(), w_.device(), W::none(), W::none()}, {w_.arg(h)});
}

EtTensor StepBuilder::unary(const char* schema, const EtTensor& in,
                            std::vector<int64_t> out_shape) {
  EtTensor o = w_.tensor(std::move(out_shape));
  op(schema, {w_.arg(in)}, {w_.arg(o)});
  return o;
}

EtTensor StepBuilder::transpose(const EtTensor& in) {
  EtTensor o = w_.view(in, {in.shape[1], in.shape[0]});
  op(kT, {w_.arg(in)}, {w_.arg(o)});
  return o;
}

void StepBuilder::makeParameters() {
  int64_t width = s_.dense.features;
  auto add = [&](int64_t out, bool relu) {
    Linear l;
    l.in = width;
    l.out = out;
    l.relu = relu;
    l.weight = w_.tensor({out, width});
    l.bias = w_.tensor({out});
    l.weight_grad = w_.tensor({out, width});
    l.bias_grad = w_.tensor({out});
    layers_.push_back(l);
    width = out;
  };
  for (int64_t h : s_.dense.bottom_mlp) add(h, true);
  bottom_layers_ = layers_.size();
  bottom_width_ = width;
  width += table_dims_;  // every table's vector reaches the interaction once
  for (size_t k = 0; k < s_.dense.top_mlp.size(); ++k) {
    add(s_.dense.top_mlp[k], k + 1 < s_.dense.top_mlp.size());
  }
  for (size_t k = 0; k < local_.size(); ++k) {
    const Shard& sh = local(k);
    weights_.push_back(w_.tensor({sh.rows, sh.dim}));
    grads_.push_back(sparseGrad(sh) ? w_.sparse({sh.rows, sh.dim}) : w_.tensor({sh.rows, sh.dim}));
    indices_.push_back(w_.tensor({sh.lookups}, true));
    offsets_.push_back(w_.tensor({sh.bags}, true));
  }
}

EtTensor StepBuilder::mlp(size_t first, size_t end, EtTensor x) {
  for (size_t k = first; k < end; ++k) {
    Linear& l = layers_[k];
    l.input = x;
    l.output = w_.tensor({B_, l.out});
    op(kLinear, {w_.arg(x), w_.arg(l.weight), w_.arg(l.bias)}, {w_.arg(l.output)});
    x = l.output;
    if (l.relu) {
      l.relu_out = unary(kRelu, x, {B_, l.out});
      x = l.relu_out;
    }
  }
  return x;
}

bool StepBuilder::sparseGrad(const Shard& sh) const {
  return s_.sparse_grad && sh.kind != Sharding::kDataParallel;  // DP: dense, all-reduced
}

// nn.EmbeddingBag(mode="sum") of local shard k: [bags, dim].
EtTensor StepBuilder::lookup(size_t k) {
  shardIs(k);
  const Shard& sh = local(k);
  EtTensor out = w_.tensor({sh.bags, sh.dim});
  offset2bag_[k] = w_.tensor({0}, true);
  bag_size_[k] = w_.tensor({sh.bags}, true);
  max_indices_[k] = w_.tensor({sh.bags}, true);
  op(kEmbeddingBag,
     {w_.arg(weights_[k]), w_.arg(indices_[k]), w_.arg(offsets_[k]), W::b(false), W::i(0),
      W::b(sparseGrad(sh)), W::none(), W::b(false), W::none()},
     {w_.arg(out), w_.arg(offset2bag_[k]), w_.arg(bag_size_[k]), w_.arg(max_indices_[k])});
  return out;
}

// EmbeddingBagBackward0 and AccumulateGrad of local shard k.
void StepBuilder::lookupBackward(size_t k, const EtTensor& grad) {
  shardIs(k);
  const Shard& sh = local(k);
  const bool sparse = sparseGrad(sh);
  EtTensor g = sparse ? w_.sparse({sh.rows, sh.dim}) : w_.tensor({sh.rows, sh.dim});
  op(kEmbeddingBagBackward,
     {w_.arg(grad), w_.arg(indices_[k]), w_.arg(offsets_[k]), w_.arg(offset2bag_[k]),
      w_.arg(bag_size_[k]), w_.arg(max_indices_[k]), W::i(sh.rows), W::b(false), W::i(0),
      W::b(sparse), w_.undefined(), W::i(-1)},
     {w_.arg(g)});
  op(kAdd, {w_.arg(grads_[k]), w_.arg(g), W::i(1)}, {w_.arg(grads_[k])});
}

void StepBuilder::forward() {
  const int64_t bags = W_ * B_;
  part_ = StepPart::kEmbedding;
  offset2bag_.resize(local_.size());
  bag_size_.resize(local_.size());
  max_indices_.resize(local_.size());
  std::vector<EtTensor> pooled;
  for (size_t k : mine_) pooled.push_back(lookup(k));
  notShard(kPerRankDimsOp);
  const int64_t mine_dim = dims_[size_t(rank_)];
  EtTensor cat = w_.tensor({bags, mine_dim});
  if (!pooled.empty()) {
    op(kCat, {w_.arg(pooled), W::i(1)}, {w_.arg(cat)});
  } else {
    op(kZeros, {W::ints({bags, 0}), W::none(), W::none(), w_.device(), W::b(false)}, {w_.arg(cat)});
  }
  // all_to_all_single: every rank sends B * mine_dim to each peer and
  // receives B * dims[q] from peer q.
  part_ = StepPart::kDense;
  table_ = kCommonOp;
  const int64_t all_dims = std::accumulate(dims_.begin(), dims_.end(), int64_t{0});
  EtTensor recv = w_.tensor({B_ * all_dims});
  op(kEmpty, {W::ints({B_ * all_dims}), W::none(), W::none(), w_.device(), W::b(false), W::none()},
     {w_.arg(recv)});
  EtTensor send = w_.view(cat, {bags * mine_dim});
  table_ = kPerRankDimsOp;
  op(kReshape, {w_.arg(cat), W::ints({-1})}, {w_.arg(send)});
  table_ = kCommonOp;
  std::vector<int64_t> send_split(size_t(W_), B_ * mine_dim), recv_split;
  for (int64_t d : dims_) recv_split.push_back(B_ * d);
  part_ = StepPart::kComm;
  commOp("all_to_allv", send, recv, send_split, recv_split);
  part_ = StepPart::kDense;
  phase_ = StepPhase::kDense;
  EtTensor received = w_.view(recv, recv.shape);
  op(kViewAs, {w_.arg(recv), w_.arg(recv)}, {w_.arg(received)});
  std::vector<EtTensor> parts;
  int64_t off = 0;
  for (int64_t n : recv_split) {
    parts.push_back(w_.view(received, {n}, off));
    off += n;
  }
  op(kSplit, {w_.arg(received), W::ints(recv_split), W::i(0)}, {w_.arg(parts)});
  std::vector<EtTensor> blocks;
  for (size_t q = 0; q < parts.size(); ++q) {
    if (dims_[q] == 0) continue;
    blocks.push_back(w_.view(parts[q], {B_, dims_[q]}));
    op(kView, {w_.arg(parts[q]), W::ints({B_, dims_[q]})}, {w_.arg(blocks.back())});
    block_of_.push_back(int(q));
  }
  // Row-wise tables: each block that carries a partial sum is split into
  // its shards' columns (split_with_sizes, dim 1).
  std::vector<std::vector<EtTensor>> pieces(blocks.size());
  for (size_t b = 0; has_row_wise_ && b < blocks.size(); ++b) {
    const std::vector<int>& in_block = block_shards_[size_t(block_of_[b])];
    if (!anyRowWise(in_block)) continue;
    std::vector<int64_t> widths;
    int64_t off = 0;
    for (int k : in_block) {
      widths.push_back(shards_[size_t(k)].dim);
      pieces[b].push_back(w_.view(blocks[b], {B_, widths.back()}, off));
      off += widths.back();
    }
    op(kSplit, {w_.arg(blocks[b]), W::ints(widths), W::i(1)}, {w_.arg(pieces[b])});
  }
  // Dense forward.
  EtTensor x = w_.tensor({B_, s_.dense.features});
  EtTensor bottom = mlp(0, bottom_layers_, x);
  z_parts_.push_back({bottom, bottom_width_, ZPart::kBottom, 0});
  std::map<int, std::vector<EtTensor>> partials;  // row-wise table -> its shards' pieces
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (pieces[b].empty()) {
      z_parts_.push_back({blocks[b], blocks[b].shape[1], ZPart::kBlock, int(b)});
      continue;
    }
    const std::vector<int>& in_block = block_shards_[size_t(block_of_[b])];
    for (size_t j = 0; j < in_block.size(); ++j) {
      const Shard& sh = shards_[size_t(in_block[j])];
      if (sh.kind == Sharding::kRowWise) {
        partials[sh.table].push_back(pieces[b][j]);
      } else {
        z_parts_.push_back({pieces[b][j], sh.dim, ZPart::kPiece, int(b), int(j)});
      }
    }
  }
  // The partial pooled sums of a row-wise table, summed (all_to_all + sum:
  // what a reduce-scatter does, in the collective Gloo has).
  for (auto& [table, list] : partials) {
    notShard(table);
    part_ = StepPart::kEmbedding;
    EtTensor sum = list[0];
    for (size_t j = 1; j < list.size(); ++j) {
      EtTensor next = w_.tensor({B_, sum.shape[1]});
      op(kAddOut, {w_.arg(sum), w_.arg(list[j]), W::i(1)}, {w_.arg(next)});
      sum = next;
    }
    z_parts_.push_back({sum, sum.shape[1], ZPart::kRowSum, table});
  }
  // Data-parallel tables: this rank's own samples only.
  for (size_t k : dp_) {
    z_parts_.push_back({lookup(k), local(k).dim, ZPart::kDataParallel, int(k)});
  }
  notShard();
  part_ = StepPart::kDense;
  std::vector<EtTensor> z_in;
  for (const ZPart& zp : z_parts_) z_in.push_back(zp.t);
  z_ = w_.tensor({B_, bottom_width_ + table_dims_});
  op(kCat, {w_.arg(z_in), W::i(1)}, {w_.arg(z_)});
  logits_ = mlp(bottom_layers_, layers_.size(), z_);
  labels_ = w_.tensor({B_, 1});
  loss_ = w_.tensor({});
  op(kBce, {w_.arg(logits_), w_.arg(labels_), W::none(), W::none(), W::i(1)}, {w_.arg(loss_)});
}

void StepBuilder::commOp(const char* name, const EtTensor& in, const EtTensor& out,
                         const std::vector<int64_t>& in_split,
                         const std::vector<int64_t>& out_split) {
  const int64_t id = w_.collective(name, in, out, in_split, out_split, rank_, W_);
  tags_.push_back({id, StepPart::kComm, phase_, kCommonOp});
}

}  // namespace tracetwin::sweep
