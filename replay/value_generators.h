// Integer tensors carry meaning (indices, offsets, class targets): random
// values would fault or change the work done. A registry keyed by the
// consuming op says which values each integer input may hold. Torch-free, so
// the rules are unit-tested without LibTorch.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/index_law.h"

namespace tracetwin::replay {

struct IntFill {
  enum class Kind : uint8_t {
    kUniform,  // uniform in [low, high]
    kOffsets,  // monotonic, starting at 0, never above `total`
    kZipf,     // low + i, i drawn with probability proportional to (i+1)^-exponent
  };
  Kind kind = Kind::kUniform;
  int64_t low = 0;
  int64_t high = 0;
  double exponent = 0;             // kZipf (replay/zipf_indices.h)
  int64_t zipf_first_row = 0;      // kZipf: i weighted (zipf_first_row + i + 1)^-exponent
  int64_t total = 0;               // kOffsets: number of indices the offsets cut
  bool last_equals_total = false;  // kOffsets with include_last_offset
  std::string rule;                // which generator decided, for reports
};

// Fill for the integer tensor input `input_index` (element `element_index`
// of a tensor list, -1 for a plain tensor) of `node`. Order: the node's
// recorded tensor_range, then the op's generator; nullopt when neither knows.
std::optional<IntFill> integerFillFor(const core::Node& node, size_t input_index,
                                      int element_index);

// Whether input `input_index` of `node` is the indices of an embedding
// lookup (embedding, embedding_bag and its forward-only and underscore forms).
bool isLookupIndices(const core::Node& node, size_t input_index);

// `fill` under a distribution a side file gives the lookup `node`
// (--index-distribution, predictors/specs/index_distribution_spec.h): the
// indices of an embedding lookup drawn by the Zipf law (core/index_law.h)
// over the rows their fill allows ([low, high]: the table, or the node's
// tensor_range). Exponent 0 is uniform: the fill as it was. Other inputs are
// left as they are.
std::optional<IntFill> withIndexDistribution(std::optional<IntFill> fill, const core::Node& node,
                                             size_t input_index, const core::IndexLaw& law);

// Parses the tensor_range attribute ({"<input index>": [min, max], ...}).
// Returns the range of `input_index`, nullopt when not recorded or malformed
// (a malformed attribute only loses the hint, it never changes the replay).
std::optional<std::pair<int64_t, int64_t>> tensorRangeFor(const core::Node& node,
                                                          size_t input_index);

// Floating-point values do not change the work of most kernels, but their
// signs and spread do for branchy ones: max-pooling a ReLU output ran 2x
// faster on the smooth, all-positive data of uniform [0, 1) fills than on
// the original's, and a sign-flipped normalisation scale changes how sparse
// the following ReLU is. So floats are symmetric around 0 like activations
// and initialised weights, and the few arguments whose meaning needs a
// positive value near 1 (normalisation scales, variances) get one.
struct FloatFill {  // uniform [low, high); the constant low when they are equal
  double low = -1.0;
  double high = 1.0;
  std::string rule = "default: uniform [-1, 1)";
  bool specific = false;  // set by a rule; the default is not
};

// Fill for the floating-point tensor input `input_index` of `node`.
FloatFill floatFillFor(const core::Node& node, size_t input_index);

// A Python float the framework wrapped into a 0-dim tensor for one call
// (SlotInfo::transient): a hyperparameter or constant, almost always positive
// (momentum 0.9, Adam's betas, eps, 1/sqrt(d)); uniform [0.5, 1). At [-1, 1)
// a negative "beta" flipped optimizer state and a "bias correction" near 0
// divided it up.
FloatFill wrappedNumberFill();
// An upfront tensor some op takes the square root or logarithm of
// (SlotInfo::non_negative): uniform [0, 1).
FloatFill nonNegativeFill();

struct ValueGenerator {
  std::string description;
  std::function<std::optional<IntFill>(const core::Node&, size_t input_index, int element_index)>
      fill;
};

// Registry keyed by op name without overload ("aten::embedding_bag").
const std::vector<std::pair<std::string, ValueGenerator>>& valueGeneratorRegistry();

}  // namespace tracetwin::replay
