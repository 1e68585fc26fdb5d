// The step, op by op, in the order PyTorch 1.13 runs and records it
// (scripts/workloads/dlrm_sweep.py captured with capture.py --nproc 2):
// zero_grad, the tables' embedding_bag, the all_to_all of pooled vectors,
// the dense forward, BCE, autograd's backward (the top MLP, the
// interaction's CatBackward, the bottom MLP, the all_to_all of gradients,
// embedding_bag backward and AccumulateGrad per table), the all-reduce of
// the dense gradients in one flat bucket, SGD.
#include "sweep/step_trace.h"

#include <fmt/core.h>

#include <cmath>
#include <map>
#include <numeric>

#include "core/aten_schemas.h"
#include "core/errors.h"
#include "core/trace_reader.h"
#include "sweep/et_writer.h"

namespace tracetwin::sweep {
namespace {

// Schemas exactly as PyTorch 1.13 registers them.
constexpr const char* kZeros =
    "aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? "
    "device=None, bool? pin_memory=None) -> Tensor";
constexpr const char* kEmpty =
    "aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
    "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor";
constexpr const char* kZero = "aten::zero_(Tensor(a!) self) -> Tensor(a!)";
using core::schemas::kEmbeddingBag;
using core::schemas::kEmbeddingBagBackward;
constexpr const char* kCat = "aten::cat(Tensor[] tensors, int dim=0) -> Tensor";
constexpr const char* kReshape = "aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)";
constexpr const char* kView = "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)";
constexpr const char* kViewAs = "aten::view_as(Tensor(a) self, Tensor other) -> Tensor(a)";
constexpr const char* kSplit =
    "aten::split_with_sizes(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> Tensor(a)[]";
constexpr const char* kLinear =
    "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor";
constexpr const char* kRelu = "aten::relu(Tensor self) -> Tensor";
constexpr const char* kBce =
    "aten::binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "
    "Tensor? pos_weight=None, int reduction=1) -> Tensor";
constexpr const char* kOnesLike =
    "aten::ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
    "device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor";
constexpr const char* kSigmoid = "aten::sigmoid(Tensor self) -> Tensor";
constexpr const char* kSubT =
    "aten::sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)";
constexpr const char* kAddOut =
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";
constexpr const char* kMulT = "aten::mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)";
constexpr const char* kDivS = "aten::div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)";
constexpr const char* kDivT = "aten::div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)";
constexpr const char* kT = "aten::t(Tensor(a) self) -> Tensor(a)";
constexpr const char* kMm = "aten::mm(Tensor self, Tensor mat2) -> Tensor";
constexpr const char* kSum =
    "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
    "dtype=None) -> Tensor";
constexpr const char* kAdd =
    "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)";
constexpr const char* kThresholdBackward =
    "aten::threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor";
constexpr const char* kNarrow =
    "aten::narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)";
constexpr const char* kSlice =
    "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt "
    "step=1) -> Tensor(a)";
constexpr const char* kCopy =
    "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)";

struct Linear {
  EtTensor weight, bias, weight_grad, bias_grad;
  EtTensor input, output;    // forward: input [B, in], output [B, out] (before ReLU)
  EtTensor relu_out;         // when followed by ReLU
  bool relu = false;
  int64_t in = 0, out = 0;
};

class StepBuilder {
 public:
  StepBuilder(const SweepSpec& spec, const std::vector<Placement>& place, int rank)
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

  RankStep build() {
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

 private:
  using W = EtWriter;

  int64_t op(const char* schema, std::vector<EtArg> in, std::vector<EtArg> out) {
    const int64_t id = w_.op(schema, std::move(in), std::move(out));
    tags_.push_back({id, part_, phase_, table_, shard_});
    return id;
  }
  // The ops that follow are local shard k's (an embedding op), or no shard's.
  void shardIs(size_t k) {
    part_ = StepPart::kEmbedding;
    shard_ = local_[k];
    table_ = shards_[size_t(shard_)].table;
  }
  void notShard(int table = kCommonOp) {
    table_ = table;
    shard_ = -1;
  }
  const Shard& local(size_t k) const { return shards_[size_t(local_[k])]; }
  void zero(const EtTensor& t) { op(kZero, {w_.arg(t)}, {w_.arg(t)}); }
  void emptyBytes() {
    // record_function's 288-byte handle (uint8) around zero_grad and step.
    EtTensor h = w_.tensor({288});
    h.itemsize = 1;
    h.type = "Tensor(unsigned char)";
    op(kEmpty, {W::ints({288}), W::i(0), W::none(), w_.device(), W::none(), W::none()},
       {w_.arg(h)});
  }
  EtTensor unary(const char* schema, const EtTensor& in, std::vector<int64_t> out_shape) {
    EtTensor o = w_.tensor(std::move(out_shape));
    op(schema, {w_.arg(in)}, {w_.arg(o)});
    return o;
  }
  EtTensor transpose(const EtTensor& in) {
    EtTensor o = w_.view(in, {in.shape[1], in.shape[0]});
    op(kT, {w_.arg(in)}, {w_.arg(o)});
    return o;
  }

  void makeParameters() {
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
      grads_.push_back(sparseGrad(sh) ? w_.sparse({sh.rows, sh.dim})
                                      : w_.tensor({sh.rows, sh.dim}));
      indices_.push_back(w_.tensor({sh.lookups}, true));
      offsets_.push_back(w_.tensor({sh.bags}, true));
    }
  }

  EtTensor mlp(size_t first, size_t end, EtTensor x) {
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

  bool sparseGrad(const Shard& sh) const {
    return s_.sparse_grad && sh.kind != Sharding::kDataParallel;  // DP: dense, all-reduced
  }

  // nn.EmbeddingBag(mode="sum") of local shard k: [bags, dim].
  EtTensor lookup(size_t k) {
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
  void lookupBackward(size_t k, const EtTensor& grad) {
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

  void forward() {
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
      op(kZeros, {W::ints({bags, 0}), W::none(), W::none(), w_.device(), W::b(false)},
         {w_.arg(cat)});
    }
    // all_to_all_single: every rank sends B * mine_dim to each peer and
    // receives B * dims[q] from peer q.
    part_ = StepPart::kDense;
    table_ = kCommonOp;
    const int64_t all_dims = std::accumulate(dims_.begin(), dims_.end(), int64_t{0});
    EtTensor recv = w_.tensor({B_ * all_dims});
    op(kEmpty, {W::ints({B_ * all_dims}), W::none(), W::none(), w_.device(), W::b(false),
                W::none()},
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

  void commOp(const char* name, const EtTensor& in, const EtTensor& out,
              const std::vector<int64_t>& in_split, const std::vector<int64_t>& out_split) {
    const int64_t id = w_.collective(name, in, out, in_split, out_split, rank_, W_);
    tags_.push_back({id, StepPart::kComm, phase_, kCommonOp});
  }

  // Backward of layers [first, end) from the last; `g` is the gradient of
  // the last layer's output. Returns the gradient of layer `first`'s input
  // (undefined for the first bottom layer, whose input needs none).
  EtTensor linearBackward(size_t first, size_t end, EtTensor g) {
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

  void backward() {
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
    op(kEmpty, {W::ints({bags * mine_dim}), W::i(6), W::none(), w_.device(), W::b(false),
                W::none()},
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

  void allReduce() {
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

  void optimizerStep() {
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

  bool anyRowWise(const std::vector<int>& shard_ids) const {
    for (int k : shard_ids) {
      if (shards_[size_t(k)].kind == Sharding::kRowWise) return true;
    }
    return false;
  }

  // One input of the interaction's cat, for its gradient in the backward.
  struct ZPart {
    enum Kind { kBottom, kBlock, kPiece, kRowSum, kDataParallel };
    EtTensor t;
    int64_t width = 0;
    Kind kind = kBottom;
    int a = 0;  // kBlock, kPiece: the block; kRowSum: the table; kDataParallel: the local shard
    int b = 0;  // kPiece: the shard's position in its block
  };

  const SweepSpec& s_;
  const int rank_;
  const int64_t B_, W_;
  EtWriter w_;
  std::vector<Shard> shards_;                 // the plan's, every rank's
  std::vector<int64_t> dims_;                 // per rank: the dims it sends in the all_to_all
  std::vector<std::vector<int>> block_shards_;  // per rank: its all_to_all shards, in order
  bool has_row_wise_ = false;
  int64_t table_dims_ = 0;                    // every table's dim: the interaction's width
  std::vector<int> local_;                    // this rank's shards (index into shards_)
  std::vector<size_t> mine_, dp_;             // local indices: all_to_all ones, data-parallel
  std::vector<int> block_of_;                 // received block -> source rank
  std::vector<ZPart> z_parts_;
  std::vector<Linear> layers_;
  size_t bottom_layers_ = 0;
  int64_t bottom_width_ = 0;
  std::vector<EtTensor> weights_, grads_, indices_, offsets_, offset2bag_, bag_size_,
      max_indices_;  // per local shard
  EtTensor z_, logits_, labels_, loss_;
  StepPart part_ = StepPart::kDense;
  StepPhase phase_ = StepPhase::kBeforeA2A;
  int table_ = kCommonOp;
  int shard_ = -1;
  std::vector<OpTag> tags_;
};

}  // namespace

double rowsShare(const TableSpec& table, int64_t x) {
  if (x <= 0) return 0;
  if (x >= table.rows) return 1;
  if (!table.zipf) return double(x) / double(table.rows);
  double head = 0, all = 0;
  for (int64_t i = 1; i <= table.rows; ++i) {
    const double w = std::pow(double(i), -*table.zipf);
    all += w;
    if (i <= x) head += w;
  }
  return head / all;
}

std::vector<Shard> planShards(const SweepSpec& spec, const std::vector<Placement>& place) {
  if (place.size() != spec.tables.size()) {
    throw UsageError(fmt::format("{}: a plan places {} tables, the file has {}", spec.source,
                                 place.size(), spec.tables.size()));
  }
  std::vector<Shard> out;
  const int64_t bags = spec.world_size * spec.batch_size;
  for (size_t t = 0; t < place.size(); ++t) {
    const Placement& p = place[t];
    const TableSpec& tab = spec.tables[t];
    const int64_t K = int64_t(p.ranks.size());
    if (K == 0 || (p.kind == Sharding::kTableWise && K != 1)) {
      throw UsageError(fmt::format("{}: table '{}' is placed on {} ranks", spec.source, tab.name,
                                   K));
    }
    for (int r : p.ranks) {
      if (r < 0 || r >= spec.world_size) {
        throw UsageError(fmt::format("{}: rank {} out of range 0..{}", spec.source, r,
                                     spec.world_size - 1));
      }
    }
    if ((p.kind == Sharding::kRowWise && tab.rows < K) ||
        (p.kind == Sharding::kColumnWise && tab.dim < K)) {
      throw UsageError(fmt::format("{}: table '{}' is too small to split over {} ranks",
                                   spec.source, tab.name, K));
    }
    const int64_t lookups = bags * tab.pooling;
    int64_t row = 0, col = 0;
    for (int64_t k = 0; k < K; ++k) {
      Shard sh;
      sh.table = int(t);
      sh.kind = p.kind;
      sh.rank = p.ranks[size_t(k)];
      sh.index = int(k);
      sh.rows = tab.rows;
      sh.dim = tab.dim;
      sh.bags = bags;
      sh.lookups = lookups;
      if (p.kind == Sharding::kRowWise) {
        sh.row_begin = row;
        sh.rows = tab.rows / K + (k < tab.rows % K ? 1 : 0);
        row += sh.rows;
        // The indices that fall in its rows, rounded so the shards' counts sum to all.
        sh.lookups = std::llround(double(lookups) * rowsShare(tab, row)) -
                     std::llround(double(lookups) * rowsShare(tab, sh.row_begin));
      } else if (p.kind == Sharding::kColumnWise) {
        sh.col_begin = col;
        sh.dim = tab.dim / K + (k < tab.dim % K ? 1 : 0);
        col += sh.dim;
      } else if (p.kind == Sharding::kDataParallel) {
        sh.bags = spec.batch_size;
        sh.lookups = spec.batch_size * tab.pooling;
      }
      out.push_back(sh);
    }
  }
  return out;
}

RankStep buildRankStep(const SweepSpec& spec, const std::vector<Placement>& place, int rank) {
  if (rank < 0 || rank >= spec.world_size) {
    throw UsageError(fmt::format("{}: rank {} out of range 0..{}", spec.source, rank,
                                 spec.world_size - 1));
  }
  return StepBuilder(spec, place, rank).build();
}

RankStep buildRankStep(const SweepSpec& spec, const std::vector<int>& owner, int rank) {
  if (owner.size() != spec.tables.size()) {
    throw UsageError(fmt::format("{}: a plan assigns {} tables, the file has {}", spec.source,
                                 owner.size(), spec.tables.size()));
  }
  return buildRankStep(spec, tableWise(owner), rank);
}

core::Graph rankGraph(const RankStep& step, const std::string& source_name) {
  return core::parseTrace(step.trace.dump(), source_name);
}

}  // namespace tracetwin::sweep
