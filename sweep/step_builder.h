// The builder of one rank's step trace (sweep/step_trace.cpp): the ops of
// docs/sweeps.md's step in PyTorch 1.13's order, written by EtWriter.
// Private to sweep/: step_builder.cpp writes the forward half and the
// bookkeeping, step_backward.cpp the backward, the all-reduce and SGD.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/aten_schemas.h"
#include "sweep/et_writer.h"
#include "sweep/step_trace.h"

namespace tracetwin::sweep {

class StepBuilder {
 public:
  StepBuilder(const SweepSpec& spec, const std::vector<Placement>& place, int rank);

  RankStep build();

 private:
  // Schemas exactly as PyTorch 1.13 registers them.
  static constexpr const char* kZeros =
      "aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? "
      "device=None, bool? pin_memory=None) -> Tensor";
  static constexpr const char* kEmpty =
      "aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
      "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor";
  static constexpr const char* kZero = "aten::zero_(Tensor(a!) self) -> Tensor(a!)";
  static constexpr const char* kEmbeddingBag = core::schemas::kEmbeddingBag;
  static constexpr const char* kEmbeddingBagBackward = core::schemas::kEmbeddingBagBackward;
  static constexpr const char* kCat = "aten::cat(Tensor[] tensors, int dim=0) -> Tensor";
  static constexpr const char* kReshape =
      "aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)";
  static constexpr const char* kView = "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)";
  static constexpr const char* kViewAs = "aten::view_as(Tensor(a) self, Tensor other) -> Tensor(a)";
  static constexpr const char* kSplit =
      "aten::split_with_sizes(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> Tensor(a)[]";
  static constexpr const char* kLinear = core::schemas::kLinear;
  static constexpr const char* kRelu = core::schemas::kRelu;
  static constexpr const char* kBce =
      "aten::binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "
      "Tensor? pos_weight=None, int reduction=1) -> Tensor";
  static constexpr const char* kOnesLike =
      "aten::ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? "
      "device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor";
  static constexpr const char* kSigmoid = "aten::sigmoid(Tensor self) -> Tensor";
  static constexpr const char* kSubT =
      "aten::sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)";
  static constexpr const char* kAddOut =
      "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";
  static constexpr const char* kMulT =
      "aten::mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)";
  static constexpr const char* kDivS =
      "aten::div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)";
  static constexpr const char* kDivT =
      "aten::div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)";
  static constexpr const char* kT = core::schemas::kT;
  static constexpr const char* kMm = core::schemas::kMm;
  static constexpr const char* kSum =
      "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
      "dtype=None) -> Tensor";
  static constexpr const char* kAdd =
      "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)";
  static constexpr const char* kThresholdBackward =
      "aten::threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor";
  static constexpr const char* kNarrow =
      "aten::narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)";
  static constexpr const char* kSlice =
      "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt "
      "step=1) -> Tensor(a)";
  static constexpr const char* kCopy =
      "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)";

  struct Linear {
    EtTensor weight, bias, weight_grad, bias_grad;
    EtTensor input, output;  // forward: input [B, in], output [B, out] (before ReLU)
    EtTensor relu_out;       // when followed by ReLU
    bool relu = false;
    int64_t in = 0, out = 0;
  };

  using W = EtWriter;

  int64_t op(const char* schema, std::vector<EtArg> in, std::vector<EtArg> out) {
    const int64_t id = w_.op(schema, std::move(in), std::move(out));
    tags_.push_back({id, part_, phase_, table_, shard_});
    return id;
  }
  // The ops that follow are local shard k's (an embedding op), or no shard's.
  void shardIs(size_t k);
  void notShard(int table = kCommonOp);
  const Shard& local(size_t k) const { return shards_[size_t(local_[k])]; }
  void zero(const EtTensor& t) { op(kZero, {w_.arg(t)}, {w_.arg(t)}); }
  void emptyBytes();
  EtTensor unary(const char* schema, const EtTensor& in, std::vector<int64_t> out_shape);
  EtTensor transpose(const EtTensor& in);

  void makeParameters();

  EtTensor mlp(size_t first, size_t end, EtTensor x);

  bool sparseGrad(const Shard& sh) const;

  // nn.EmbeddingBag(mode="sum") of local shard k: [bags, dim].
  EtTensor lookup(size_t k);

  // EmbeddingBagBackward0 and AccumulateGrad of local shard k.
  void lookupBackward(size_t k, const EtTensor& grad);

  void forward();

  void commOp(const char* name, const EtTensor& in, const EtTensor& out,
              const std::vector<int64_t>& in_split, const std::vector<int64_t>& out_split);

  // Backward of layers [first, end) from the last; `g` is the gradient of
  // the last layer's output. Returns the gradient of layer `first`'s input
  // (undefined for the first bottom layer, whose input needs none).
  EtTensor linearBackward(size_t first, size_t end, EtTensor g);

  void backward();

  void allReduce();

  void optimizerStep();

  bool anyRowWise(const std::vector<int>& shard_ids) const;

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
  std::vector<Shard> shards_;                   // the plan's, every rank's
  std::vector<int64_t> dims_;                   // per rank: the dims it sends in the all_to_all
  std::vector<std::vector<int>> block_shards_;  // per rank: its all_to_all shards, in order
  bool has_row_wise_ = false;
  int64_t table_dims_ = 0;         // every table's dim: the interaction's width
  std::vector<int> local_;         // this rank's shards (index into shards_)
  std::vector<size_t> mine_, dp_;  // local indices: all_to_all ones, data-parallel
  std::vector<int> block_of_;      // received block -> source rank
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

}  // namespace tracetwin::sweep
