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
// A histogram may carry one more value after its bins: the lookups' unique
// fraction (distinct rows / lookups), exact. A Zipf table's histogram does
// (zipfReuseHistogram): its hottest rows are looked up thousands of times,
// far past the last bin's mid-point of 96, so the bins alone put the unique
// fraction of 15,360 lookups into 200,000 rows at 0.34 (exponent 1.2) against
// 0.20 expected. Poisson (uniform, hot-set) histograms keep 8 values: their
// counts stay near lambda, where the mid-points hold.
inline constexpr int kReuseValuesWithUnique = kReuseBins + 1;

struct OpFeatures {
  // "aten::addmm" (no overload). Interned: a 100k-op prediction copies it
  // into every op's features and compares it to group them.
  core::InternedText op;
  core::InternedText family;  // core::opFamily; interned like op
  // Memory-bound ops: op plus flags for operand patterns that take another
  // kernel path at the same op name ("aten::add_#0d": a 0-dim tensor operand,
  // ~2 us of type promotion vs ~0.6 us; "#mix": operands of several dtypes;
  // "#nc": a non-contiguous operand). Empty when no flag applies (saves an
  // allocation per op): use variantKey().
  std::string variant;
  // The op runs right after another op of the same variant on its thread
  // (5,000 add_ in a row; SGD's add_ after add_): its dispatcher and kernel
  // code is still hot, so small ops cost less than after a different op.
  // Set by the caller (training: MeasuredOp::repeated; predictor: the
  // previous op), not by computeFeatures.
  bool repeated = false;
  // Input bytes likely evicted from the last-level cache since their last
  // touch in the iteration (predictors/host/cache_reuse.h); set by the predictor,
  // 0 in training (microbenchmarks re-run one op on cache-hot inputs).
  double cold_bytes = 0.0;
  // How much other traffic came between the op's inputs' last touch and the
  // op (reuse_distance.h); negative when unknown. Set by the
  // caller like `repeated`: training from the calibration unit the op ran in,
  // the predictor from the iteration, for families whose trees were fitted
  // on it (reuseColumnValue).
  double reuse_bytes = -1.0;
  core::DType dtype = core::DType::kUnknown;  // dtype of the main operand
  // halfPrecisionOf(node) (feature_shapes.h): picks a model set's precision
  // models (ModelSet::setFor); not a booster column.
  core::DType precision = core::DType::kUnknown;
  double flops = 0.0;                         // useful FLOPs of the op
  double bytes = 0.0;                         // bytes read + written (compulsory traffic)
  // Family-specific regression features (log2 of sizes, flags); fixed length
  // per family. GEMM: log2 M,N,K,batch, itemsize, log2 flops, log2 AI, A and
  // B read transposed (appended last: models saved with 7 columns still load).
  std::vector<float> x;
  // Collectives.
  std::string collective;  // "all_reduce" ...
  int64_t world_size = 1;
  double message_bytes = 0.0;
  // Embedding ops.
  double table_bytes = 0.0;      // E * D * itemsize
  double gathered_bytes = 0.0;   // B * L * D * itemsize
  double unique_fraction = 1.0;  // unique rows / lookups (from the histogram)
  // Convolutions: the filter's bytes (read once per pass over it).
  double weight_bytes = 0.0;
};

// The booster's reuse column: log2 of 1 + the reuse distance in MiB, on a
// grid of quarter octaves (ops of a step have as many distances as ops; the
// predictor predicts each distinct feature set once). NaN when unknown.
float reuseColumnValue(const OpFeatures& f);
// Whether two ops have the same reuse column (both unknown, or one grid value).
bool sameReuseColumn(const OpFeatures& a, const OpFeatures& b);

// The op's variant, or its name when it has no flags.
inline const std::string& variantKey(const OpFeatures& f) {
  return f.variant.empty() ? f.op.str() : f.variant;
}

// Computes the features of `node`. `index_reuse` (may be null or empty) is a
// measured reuse histogram for embedding ops; without one, uniformly random
// indices (Poisson access counts) are assumed.
OpFeatures computeFeatures(const core::Node& node,
                           const std::vector<double>* index_reuse = nullptr);

// Number of regression features of a family (0 when it has none).
size_t featureCount(const std::string& family);

}  // namespace tracetwin::predictors
