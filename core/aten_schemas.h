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

}  // namespace tracetwin::core::schemas
