// LibTorch schemas (as PyTorch 1.13 registers them) of ops that more than one
// layer writes into graphs of its own: calibration's microbenchmarks and the
// sweep's per-plan steps. One text each, so both write the same op.
#pragma once

namespace tracetwin::core::schemas {

inline constexpr const char* kEmbeddingBag =
    "aten::embedding_bag.padding_idx(Tensor weight, Tensor indices, Tensor offsets, bool "
    "scale_grad_by_freq, int mode, bool sparse, Tensor? per_sample_weights, bool "
    "include_last_offset, int? padding_idx) -> (Tensor, Tensor, Tensor, Tensor)";
inline constexpr const char* kEmbeddingBagBackward =
    "aten::_embedding_bag_backward(Tensor grad, Tensor indices, Tensor offsets, Tensor "
    "offset2bag, Tensor bag_size, Tensor maximum_indices, int num_weights, bool "
    "scale_grad_by_freq, int mode, bool sparse, Tensor? per_sample_weights, int padding_idx=-1) "
    "-> Tensor";

inline constexpr const char* kLinear =
    "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor";
inline constexpr const char* kRelu = "aten::relu(Tensor self) -> Tensor";
inline constexpr const char* kMm = "aten::mm(Tensor self, Tensor mat2) -> Tensor";
inline constexpr const char* kT = "aten::t(Tensor(a) self) -> Tensor(a)";

}  // namespace tracetwin::core::schemas
