// Strides of tensors that the trace does not record them for.
//
// Execution traces before schema 1.1.1 record shapes but no strides, so a
// tensor the replay has to materialise up front would be made contiguous. For
// views made inside an op that is not replayed (the transposed weight that
// aten::linear saves for its backward, an expanded bias) that is wrong: the
// replayed consumer then sees another memory layout than the original, and
// BLAS and pooling kernels take a different, often much slower, path (mm of a
// saved W^T ran 1.8x slower on the bundled MLP). Those views are all made by
// aten::as_strided calls that the trace records as children, with the size
// and stride lists as arguments, so their layout can be recovered exactly.
// Torch-free.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "core/graph.h"

namespace tracetwin::replay {

class StrideHints {
 public:
  // Scans every node of `graph` (at any depth) for as_strided calls whose
  // output has no recorded strides.
  static StrideHints fromGraph(const core::Graph& graph);

  // Records that node `node_id` produced a view with this identity and these strides.
  void add(const core::TensorValue& view, const std::vector<int64_t>& strides,
           core::NodeId node_id);

  // Strides of the latest view with t's identity made before node `before`,
  // if any. Ids are reused, so a hint from after the use does not apply.
  std::optional<std::vector<int64_t>> lookup(const core::TensorValue& t, core::NodeId before) const;

  size_t size() const { return count_; }

 private:
  // The dtype too: addresses are reused across dtypes (autocast's bf16 copy
  // of a weight freed, an fp32 gradient of the same shape placed there), and
  // a transposed bf16 view's strides say nothing about the fp32 tensor.
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, std::vector<int64_t>, core::DType>;
  static Key keyOf(const core::TensorValue& t);
  // Per identity: (node id, strides), ascending node id.
  std::map<Key, std::vector<std::pair<core::NodeId, std::vector<int64_t>>>> hints_;
  size_t count_ = 0;
};

}  // namespace tracetwin::replay
