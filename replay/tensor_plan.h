// Which replay tensor ("slot") each recorded tensor value refers to, when
// each slot is defined and last used, and the peak memory the trace implies.
// Torch-free: it works on recorded identities only.
//
// Tensor ids are pointers reused after memory is freed, so a tensor is keyed
// by its whole recorded identity (id, storage, offset, numel, itemsize,
// device, shape) and looked up in order of definition: an op's output
// re-binds the key, later inputs with that key see the new slot.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/sparse_layout.h"
#include "core/value.h"

namespace tracetwin::replay {

struct SlotInfo {
  core::TensorValue meta;      // as first recorded
  bool upfront = false;        // first seen as an input: materialised before the replay
  int64_t def_op = -1;         // op index that produces it (-1 when upfront)
  int64_t last_use = -1;       // last op index that reads or produces it
  int64_t first_op = -1;       // upfront: first op index that reads it
  int32_t first_arg = -1;      // upfront: input position at the first reading op
  int32_t first_element = -1;  // ... and element of a tensor list there (-1: plain tensor)
  // An upfront 0-dim CPU tensor on a storage that no other upfront view is
  // in use on when an op reads it (addresses are reused):
  // a Python number the framework wrapped into a tensor just before the
  // call (`x.add_(1)` records a fresh 0-dim long tensor per call). Created
  // right before each op that reads it (scalar_reads) in every iteration and
  // released after it, as in the original run, instead of once before the
  // replay.
  bool transient = false;
  // Upfront 0-dim CPU slots: every op index that reads it, ascending. A key
  // read by several ops can be several wrapped numbers that the allocator
  // placed at one address (Adam's step wraps a beta for mul_ and, later, a
  // bias correction for div, both recorded as tensor 94 on storage 1535):
  // a transient slot is created before each of these ops.
  std::vector<int64_t> scalar_reads;
  // Upfront: some op takes its square root or logarithm (Adam's exp_avg_sq,
  // updated in place, then sqrt), so its values must not be negative.
  bool non_negative = false;
  // A sparse COO tensor (core/sparse_layout.h): recorded without storage, it
  // is built with at::sparse_coo_tensor (upfront: `nnz` random rows).
  bool sparse = false;
  core::SparseTensor sparse_layout;
};

class TensorPlan {
 public:
  // Slot read by op `op_index` (creates an upfront slot for an unseen key).
  // `arg`/`element` locate the value in the op's inputs (for value generators).
  int32_t useInput(const core::TensorValue& t, int64_t op_index, int32_t arg = -1,
                   int32_t element = -1);
  // Slot produced by op `op_index` (always a new slot).
  int32_t defineOutput(const core::TensorValue& t, int64_t op_index);

  const std::vector<SlotInfo>& slots() const { return slots_; }
  // The trace's sparse tensors (core::inferSparseTensors); set before any op
  // is added. Their values are recorded like undefined tensors.
  void setSparseTensors(core::SparseTensors sparse) { sparse_ = std::move(sparse); }
  // Whether a recorded tensor value gets a slot: defined, or a recognised
  // sparse tensor.
  bool replayable(const core::TensorValue& t) const {
    return t.defined() || (core::sparseCandidate(t) && sparse_.count(t.tensor_id) > 0);
  }
  // Gives an upfront slot the strides its view had in the original run, for
  // traces that record none (see stride_hints.h).
  void setUpfrontStrides(int32_t slot, std::vector<int64_t> strides);
  // Marks the transient slots (see SlotInfo::transient); call once every op
  // has been added.
  void markTransients();
  // Marks an upfront slot that an op with a non-negative domain reads (see
  // SlotInfo::non_negative); other slots are left alone.
  void markNonNegative(int32_t slot);
  // For each op index < op_count, the produced and transient slots whose last
  // use it is: released right after that op, so replay memory follows the
  // original.
  std::vector<std::vector<int32_t>> releaseLists(int64_t op_count) const;

  // Bytes per recorded storage (storage_id, device): the largest extent of any
  // view of it, converted through bytes (views of different itemsize share it).
  static int64_t extentElements(const core::TensorValue& t);

 private:
  // The recorded identity, dtype included: a freed Python integer and the
  // float wrapped after it at its address can share id, storage and size
  // (AdamW's `step += 1`, then a bias correction for div: one long, one
  // double, both tensor 239 on storage 3012 of the LSTM capture); as one slot
  // the divisor took the long's value 0.
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, std::string,
                         std::vector<int64_t>, core::DType>;
  static Key keyOf(const core::TensorValue& t);
  std::map<Key, int32_t> current_;
  std::vector<SlotInfo> slots_;
  core::SparseTensors sparse_;
  void markSparse(SlotInfo& info) const;
};

// Peak bytes of live storages the trace implies for one pass over `ops`
// (inputs first seen are live throughout; produced tensors from their op to
// their last use; storages counted once at their largest recorded extent).
int64_t tracePeakBytes(const std::vector<const std::vector<core::Value>*>& op_inputs,
                       const std::vector<const std::vector<core::Value>*>& op_outputs);

}  // namespace tracetwin::replay
