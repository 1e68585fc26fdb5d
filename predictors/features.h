// Model features computed from a trace node: the same function serves
// training (calibration samples) and prediction, so they can never disagree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.h"

namespace tracetwin::predictors {

// Bins of the embedding index-reuse histogram: access counts in (0,1], (1,2],
// (2,4], (4,8], (8,16], (16,32], (32,64], (64,inf).
inline constexpr int kReuseBins = 8;

struct OpFeatures {
  std::string op;                             // "aten::addmm" (no overload)
  std::string family;                         // core::opFamily
  core::DType dtype = core::DType::kUnknown;  // dtype of the main operand
  double flops = 0.0;                         // useful FLOPs of the op
  double bytes = 0.0;                         // bytes read + written (compulsory traffic)
  // Family-specific regression features (log2 of sizes, flags); fixed length
  // per family. GEMM: log2 M,N,K,batch, itemsize, log2 flops, log2 AI.
  std::vector<float> x;
  // Collectives.
  std::string collective;  // "all_reduce" ...
  int64_t world_size = 1;
  double message_bytes = 0.0;
  // Embedding ops.
  double table_bytes = 0.0;      // E * D * itemsize
  double gathered_bytes = 0.0;   // B * L * D * itemsize
  double unique_fraction = 1.0;  // unique rows / lookups (from the histogram)
};

// Computes the features of `node`. `index_reuse` (may be null or empty) is a
// measured reuse histogram for embedding ops; without one, uniformly random
// indices (Poisson access counts) are assumed.
OpFeatures computeFeatures(const core::Node& node,
                           const std::vector<double>* index_reuse = nullptr);

// Number of regression features of a family (0 when it has none).
size_t featureCount(const std::string& family);

}  // namespace tracetwin::predictors
