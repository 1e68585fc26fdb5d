// The live replay tensors, one per TensorPlan slot: upfront tensors built
// once on shared storages (random floats, integer values from the value
// generators), produced tensors bound by ops and released after their last
// use. Tracks the peak bytes of live storages. Replay-private.
#pragma once

#include <ATen/ATen.h>
#include <ATen/ScalarOps.h>

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/graph.h"
#include "core/index_law.h"
#include "replay/ivalue_conversion.h"
#include "replay/tensor_plan.h"
#include "replay/value_generators.h"

namespace tracetwin::replay {

class SlotTable {
 public:
  SlotTable(const TensorPlan& plan, const DeviceMap& devices);

  // Builds every upfront slot. op_nodes[i] is the node of op index i (for the
  // value generators). Throws RuntimeFailure on out of memory.
  void materialiseUpfront(const std::vector<const core::Node*>& op_nodes, uint64_t seed);
  // Zipf exponents of embedding lookups' indices by op id (the side file of
  // ReplayOptions::index_zipf); set before materialiseUpfront.
  void setIndexDistributions(std::unordered_map<core::NodeId, core::IndexLaw> index_zipf) {
    index_zipf_ = std::move(index_zipf);
  }
  // The lookups whose indices materialiseUpfront drew from a Zipf
  // distribution: those of index_zipf whose indices the replay makes (not
  // computed by an earlier op of the trace).
  const std::unordered_set<core::NodeId>& zipfApplied() const { return zipf_applied_; }

  // Writes the upfront values of materialiseUpfront again, identically (same
  // seed, same order). Replayed optimizer steps and normalisation layers
  // update weights and running statistics in place, and on random data
  // those drift within a few iterations towards degenerate values (huge,
  // zero or NaN) on which branchy kernels run at another speed: max_pool2d
  // went from 1.3 ms to 0.6 ms by the third iteration of the bundled CNN.
  // Called before every iteration after the first, outside the timed region.
  void refillUpfront();
  // Draws the integer upfront values again from seed + `draw` (another
  // batch's indices; ReplayOptions::fresh_indices) and leaves the others.
  void redrawIntegers(uint64_t draw);
  // Before iteration `iteration` (> 0): refillUpfront, or with
  // `indices_only` redrawIntegers.
  void refillBefore(uint64_t iteration, bool indices_only) {
    indices_only ? redrawIntegers(iteration) : refillUpfront();
  }

  // The slot's tensor; an unbound produced slot (its op failed or was not
  // run) gets a zero-filled stand-in of the recorded shape.
  // The slot's tensor as it is (undefined when unbound), without a stand-in.
  const at::Tensor& peek(int32_t slot) const { return tensors_[static_cast<size_t>(slot)]; }
  const at::Tensor& get(int32_t slot) {
    at::Tensor& t = tensors_[static_cast<size_t>(slot)];
    if (!t.defined()) bind(slot, standIn(slot));
    return t;
  }
  void bind(int32_t slot, at::Tensor tensor) {
    if (tracking_) track(tensor, +1);
    tensors_[static_cast<size_t>(slot)] = std::move(tensor);
  }
  void release(int32_t slot) {
    at::Tensor& t = tensors_[static_cast<size_t>(slot)];
    if (tracking_ && t.defined()) track(t, -1);
    t.reset();
  }
  // Creates a transient slot's tensor (SlotInfo::transient) with its value
  // from materialiseUpfront, the way the framework wraps a Python number: on
  // the CPU without the dispatcher.
  void createTransient(int32_t slot) {
    const TransientValue& v = transient_values_[static_cast<size_t>(slot)];
    bind(slot, v.on_cpu ? at::detail::scalar_tensor_static(
                              v.value, v.options.dtype().toScalarType(), at::kCPU)
                        : at::scalar_tensor(v.value, v.options));
  }
  // Drops every produced slot (end of an iteration).
  void releaseProduced();

  void setTracking(bool on) { tracking_ = on; }
  int64_t peakBytes() const { return peak_bytes_; }
  int64_t standIns() const { return stand_ins_; }

 private:
  struct TransientValue {
    c10::Scalar value;
    at::TensorOptions options;
    bool on_cpu = true;
  };

  at::Tensor standIn(int32_t slot);
  at::Tensor sparseUpfront(const SlotInfo& info) const;
  std::vector<int32_t> sparse_upfront_;  // upfront sparse slots (SlotInfo::sparse)
  TransientValue transientValue(const std::vector<const core::Node*>& op_nodes,
                                const SlotInfo& info) const;
  void track(const at::Tensor& t, int delta);

  struct UpfrontFill {
    at::Tensor flat;  // the view's whole extent, 1-D
    at::Tensor view;
    FloatFill float_fill;
    std::optional<IntFill> int_fill;
  };

  const TensorPlan& plan_;
  std::vector<TransientValue> transient_values_;  // by slot; set for transient slots only
  DeviceMap devices_;
  std::vector<UpfrontFill> fills_;  // in fill order
  uint64_t seed_ = 0;
  std::unordered_map<core::NodeId, core::IndexLaw> index_zipf_;
  std::unordered_set<core::NodeId> zipf_applied_;
  std::vector<at::Tensor> tensors_;
  bool tracking_ = false;
  std::unordered_map<const void*, int> storage_refs_;
  int64_t live_bytes_ = 0;
  int64_t peak_bytes_ = 0;
  int64_t stand_ins_ = 0;
};

// "DefaultCPUAllocator: can't allocate memory: you tried to allocate N bytes"
// and the CUDA caching allocator's message: true for an out-of-memory error,
// with the bytes asked when the message says.
bool isOutOfMemory(const std::string& message, int64_t* bytes);

}  // namespace tracetwin::replay
