// What a fused scaled-dot-product attention kernel computes (PyTorch 2's
// aten::scaled_dot_product_attention and its flash, memory-efficient and
// cuDNN forward and backward ops), as the batched GEMMs that the calibrated
// gemm family predicts.
//
// Why: no calibration measures attention kernels. The forward was predicted
// as an uncalibrated GEMM on the wrong FLOPs, the backward as a memory-bound
// op on its tensor bytes: an H100's fp32 decoder step had them at 0.15x and
// 0.07x their Kineto times (data/h100/s31/check). The fused kernels are
// bound by their matrix products; the L x L scores and their softmax stay in
// on-chip memory and add no DRAM traffic. With Q [.., Lq, E], K [.., Lk, E],
// V [.., Lk, Ev] and the query's leading dims as the batch (B x heads; keys
// and values may have fewer heads, as grouped-query attention shares them):
//   forward:  S = Q Kᵀ, O = P V                              (2 GEMMs)
//   backward: S = Q Kᵀ again, dV = Pᵀ dO, dP = dO Vᵀ,
//             dQ = dS K, dK = dSᵀ Q                           (5 GEMMs)
// A causal mask is not counted. The kernels skip the score tiles above the
// diagonal, but on an H100 at L = 256 the causal decoder's kernels took
// 0.87-0.89 (fp32) and 1.0 (bf16, cuDNN) of the bidirectional encoder's per
// batch element, not the ~0.6 of the tiles: the last query tiles still walk
// every key tile, and they bound the kernel's last wave.
#pragma once

#include <vector>

#include "core/graph.h"
#include "predictors/kernels/stand_in_ops.h"

namespace tracetwin::predictors {

// The GEMMs of `op` as aten::bmm stand-ins (each run once), or empty when `op` is not a fused
// attention op (the math fallback, `_scaled_dot_product_attention_math`, records its own matmuls
// and softmax) or its query, key and value cannot be read.
std::vector<StandInOp> attentionGemms(const core::Node& op);

}  // namespace tracetwin::predictors
