// The backward half of one rank's step (sweep/step_builder.h): autograd's
// order from the loss to the tables, the all-reduce of the dense bucket, SGD.
#include <fmt/core.h>

#include <cmath>
#include <map>
#include <numeric>

#include "core/aten_schemas.h"
#include "core/errors.h"
#include "sweep/step_builder.h"

namespace tracetwin::sweep {

// Backward of layers [first, end) from the last; `g` is the gradient of
// the last layer's output. Returns the gradient of layer `first`'s input
// (undefined for the first bottom layer, whose input needs none).
EtTensor StepBuilder::linearBackward(size_t first, size_t end, EtTensor g) {
  for (size_t k = end; k-- > first;) {
    Linear& l = layers_[k];
    // AddmmBackward0 (the first bottom layer's input needs no gradient).
    EtTensor grad_in;
    const bool needs_input_grad = k != 0;
    if (needs_input_grad) {
      EtTensor wt = transpose(w_.view(l.weight, {l.in, l.out}));  // the saved W^T
      grad_in = w_.tensor({B_, l.in});
      op(kMm, {w_.arg(g), w_.arg(wt)}, {w_.arg(grad_in)});
    }
    EtTensor gt = transpose(g);
    EtTensor gw_t = w_.tensor({l.out, l.in});
    op(kMm, {w_.arg(gt), w_.arg(l.input)}, {w_.arg(gw_t)});
    EtTensor gw = transpose(gw_t);
    EtTensor gb1 = w_.tensor({1, l.out});
    op(kSum, {w_.arg(g), W::ints({0}), W::b(true), W::none()}, {w_.arg(gb1)});
    EtTensor gb = w_.view(gb1, {l.out});
    op(kView, {w_.arg(gb1), W::ints({l.out})}, {w_.arg(gb)});
    op(kAdd, {w_.arg(l.bias_grad), w_.arg(gb), W::i(1)}, {w_.arg(l.bias_grad)});
    EtTensor gw2 = transpose(gw);  // TBackward0
    op(kAdd, {w_.arg(l.weight_grad), w_.arg(gw2), W::i(1)}, {w_.arg(l.weight_grad)});
    if (!needs_input_grad) return {};
    if (k == first) return grad_in;
    // The layer before ends in a ReLU: ReluBackward0.
    Linear& prev = layers_[k - 1];
    EtTensor gr = w_.tensor({B_, prev.out});
    op(kThresholdBackward, {w_.arg(grad_in), w_.arg(prev.relu_out), W::i(0)}, {w_.arg(gr)});
    g = gr;
  }
  return {};
}

void StepBuilder::backward() {
  part_ = StepPart::kDense;
  EtTensor one = w_.tensor({});
  op(kOnesLike, {w_.arg(loss_), W::i(6), W::i(0), w_.device(), W::b(false), W::i(1)},
     {w_.arg(one)});
  EtTensor s = unary(kSigmoid, logits_, {B_, 1});
  op(kSubT, {w_.arg(s), w_.arg(labels_), W::i(1)}, {w_.arg(s)});
  op(kMulT, {w_.arg(s), w_.arg(one)}, {w_.arg(s)});
  op(kDivS, {w_.arg(s), W::i(B_)}, {w_.arg(s)});
  EtTensor gz = linearBackward(bottom_layers_, layers_.size(), s);
  // CatBackward0: one narrow per input of the interaction's cat.
  std::vector<EtTensor> grads;  // per z part
  int64_t off = 0;
  for (const ZPart& zp : z_parts_) {
    grads.push_back(w_.view(gz, {B_, zp.width}, off));
    op(kNarrow, {w_.arg(gz), W::i(1), W::i(off), W::i(zp.width)}, {w_.arg(grads.back())});
    off += zp.width;
  }
  // Data-parallel tables (looked up last, so first back), last first.
  for (size_t p = z_parts_.size(); p-- > 0;) {
    if (z_parts_[p].kind == ZPart::kDataParallel) lookupBackward(size_t(z_parts_[p].a), grads[p]);
  }
  notShard();
  part_ = StepPart::kDense;
  // The bottom MLP: ReluBackward0 of its last layer, then its layers.
  if (bottom_layers_ > 0) {
    const Linear& last = layers_[bottom_layers_ - 1];
    EtTensor gr = w_.tensor({B_, last.out});
    op(kThresholdBackward, {w_.arg(grads[0]), w_.arg(last.relu_out), W::i(0)}, {w_.arg(gr)});
    linearBackward(0, bottom_layers_, gr);
  }
  // Each received block's gradient: its narrow, or (a block split for
  // row-wise tables) SplitWithSizesBackward0's cat of its pieces'
  // gradients, the blocks last first; a row-wise table's partial sums all
  // take its sum's gradient.
  std::vector<EtTensor> block_grads(block_of_.size());
  std::vector<bool> whole(block_of_.size(), false);
  std::map<int, EtTensor> row_sum_grad;
  for (size_t p = 0; p < z_parts_.size(); ++p) {
    if (z_parts_[p].kind == ZPart::kBlock) {
      block_grads[size_t(z_parts_[p].a)] = grads[p];
      whole[size_t(z_parts_[p].a)] = true;
    }
    if (z_parts_[p].kind == ZPart::kRowSum) row_sum_grad[z_parts_[p].a] = grads[p];
  }
  for (size_t b = block_of_.size(); b-- > 0;) {
    if (whole[b]) continue;
    const std::vector<int>& in_block = block_shards_[size_t(block_of_[b])];
    std::vector<EtTensor> piece_grads;
    for (size_t j = 0; j < in_block.size(); ++j) {
      const Shard& sh = shards_[size_t(in_block[j])];
      if (sh.kind == Sharding::kRowWise) {
        piece_grads.push_back(row_sum_grad.at(sh.table));
        continue;
      }
      for (size_t p = 0; p < z_parts_.size(); ++p) {
        if (z_parts_[p].kind == ZPart::kPiece && z_parts_[p].a == int(b) &&
            z_parts_[p].b == int(j)) {
          piece_grads.push_back(grads[p]);
        }
      }
    }
    block_grads[b] = w_.tensor({B_, dims_[size_t(block_of_[b])]});
    op(kCat, {w_.arg(piece_grads), W::i(1)}, {w_.arg(block_grads[b])});
  }
  // ViewBackward0 per block (last first), SplitWithSizesBackward0's cat.
  std::vector<EtTensor> flat(block_grads.size());
  for (size_t b = block_grads.size(); b-- > 0;) {
    const int64_t wdt = dims_[size_t(block_of_[b])];
    flat[b] = w_.view(block_grads[b], {B_ * wdt});
    op(kReshape, {w_.arg(block_grads[b]), W::ints({B_ * wdt})}, {w_.arg(flat[b])});
  }
  const int64_t all_dims = std::accumulate(dims_.begin(), dims_.end(), int64_t{0});
  EtTensor grad_recv = w_.tensor({B_ * all_dims});
  op(kCat, {w_.arg(flat), W::i(0)}, {w_.arg(grad_recv)});
  // _AlltoAllSingleBackward: the gradients go back to the tables' owners.
  const int64_t mine_dim = dims_[size_t(rank_)];
  const int64_t bags = W_ * B_;
  EtTensor grad_send = w_.tensor({bags * mine_dim});
  op(kEmpty, {W::ints({bags * mine_dim}), W::i(6), W::none(), w_.device(), W::b(false), W::none()},
     {w_.arg(grad_send)});
  std::vector<int64_t> in_split, out_split(size_t(W_), B_ * mine_dim);
  for (int64_t d : dims_) in_split.push_back(B_ * d);
  commOp("all_to_allv", grad_recv, grad_send, in_split, out_split);
  phase_ = StepPhase::kTables;
  EtTensor got = w_.view(grad_send, grad_send.shape);
  op(kViewAs, {w_.arg(grad_send), w_.arg(grad_send)}, {w_.arg(got)});
  if (mine_.empty()) return;
  part_ = StepPart::kEmbedding;
  EtTensor g2 = w_.view(got, {bags, mine_dim});
  notShard(kPerRankDimsOp);
  op(kReshape, {w_.arg(got), W::ints({bags, mine_dim})}, {w_.arg(g2)});
  std::vector<EtTensor> per_shard;
  off = 0;
  for (size_t k : mine_) {
    shardIs(k);
    const int64_t d = local(k).dim;
    per_shard.push_back(w_.view(g2, {bags, d}, off));
    op(kNarrow, {w_.arg(g2), W::i(1), W::i(off), W::i(d)}, {w_.arg(per_shard.back())});
    off += d;
  }
  // EmbeddingBagBackward0 and AccumulateGrad, last table first.
  for (size_t m = mine_.size(); m-- > 0;) lookupBackward(mine_[m], per_shard[m]);
  notShard();
}

void StepBuilder::allReduce() {
  part_ = StepPart::kDense;
  std::vector<EtTensor> flat;
  int64_t total = 0;
  std::vector<EtTensor*> grads;
  for (Linear& l : layers_) {
    grads.push_back(&l.weight_grad);
    grads.push_back(&l.bias_grad);
  }
  // Data-parallel tables' dense gradients join the dense part's bucket.
  for (size_t k : dp_) grads.push_back(&grads_[k]);
  for (EtTensor* g : grads) {
    flat.push_back(w_.view(*g, {g->numel}));
    op(kReshape, {w_.arg(*g), W::ints({-1})}, {w_.arg(flat.back())});
    total += g->numel;
  }
  EtTensor bucket = w_.tensor({total});
  op(kCat, {w_.arg(flat), W::i(0)}, {w_.arg(bucket)});
  part_ = StepPart::kComm;
  commOp("allreduce", bucket, bucket, {}, {});
  part_ = StepPart::kDense;
  phase_ = StepPhase::kAfterReduce;
  EtTensor world = w_.tensor({}, true);  // `flat /= world`: a wrapped 0-dim long
  op(kDivT, {w_.arg(bucket), w_.arg(world)}, {w_.arg(bucket)});
  int64_t off = 0;
  for (EtTensor* g : grads) {
    EtTensor piece = w_.view(bucket, {g->numel}, off);
    op(kSlice, {w_.arg(bucket), W::i(0), W::i(off), W::i(off + g->numel), W::i(1)},
       {w_.arg(piece)});
    EtTensor shaped = w_.view(piece, g->shape);
    op(kViewAs, {w_.arg(piece), w_.arg(*g)}, {w_.arg(shaped)});
    op(kCopy, {w_.arg(*g), w_.arg(shaped), W::b(false)}, {w_.arg(*g)});
    off += g->numel;
  }
}

void StepBuilder::optimizerStep() {
  part_ = StepPart::kDense;
  op(kZeros, {W::ints({1}), W::none(), W::none(), w_.device(), W::b(false)},
     {w_.arg(w_.tensor({1}))});
  emptyBytes();
  for (Linear& l : layers_) {
    op(kAdd, {w_.arg(l.weight), w_.arg(l.weight_grad), W::d(-s_.lr)}, {w_.arg(l.weight)});
    op(kAdd, {w_.arg(l.bias), w_.arg(l.bias_grad), W::d(-s_.lr)}, {w_.arg(l.bias)});
  }
  for (size_t k = 0; k < local_.size(); ++k) {
    shardIs(k);
    op(kAdd, {w_.arg(weights_[k]), w_.arg(grads_[k]), W::d(-s_.lr)}, {w_.arg(weights_[k])});
  }
  notShard();
}

bool StepBuilder::anyRowWise(const std::vector<int>& shard_ids) const {
  for (int k : shard_ids) {
    if (shards_[size_t(k)].kind == Sharding::kRowWise) return true;
  }
  return false;
}

}  // namespace tracetwin::sweep
