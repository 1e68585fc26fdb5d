#include "replay/value_generators.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <unordered_map>

namespace tracetwin::replay {
namespace {

using core::Node;
using core::Value;
using core::ValueKind;

// Position of the schema argument `name` in the recorded inputs.
std::optional<size_t> argIndex(const Node& node, const std::string& name) {
  if (!node.schema) return std::nullopt;
  const auto& args = node.schema->arguments;
  for (size_t i = 0; i < args.size() && i < node.inputs.size(); ++i) {
    if (args[i].name == name) return i;
  }
  return std::nullopt;
}

bool isArg(const Node& node, size_t index, const std::string& name) {
  auto i = argIndex(node, name);
  return i && *i == index;
}

const core::TensorValue* tensorArg(const Node& node, const std::string& name) {
  auto i = argIndex(node, name);
  if (!i || node.inputs[*i].kind != ValueKind::kTensor) return nullptr;
  return &*node.inputs[*i].tensor;
}

std::optional<int64_t> intArg(const Node& node, const std::string& name) {
  auto i = argIndex(node, name);
  if (!i || node.inputs[*i].kind != ValueKind::kInt) return std::nullopt;
  return node.inputs[*i].int_value;
}

std::optional<bool> boolArg(const Node& node, const std::string& name) {
  auto i = argIndex(node, name);
  if (!i) return std::nullopt;
  const Value& v = node.inputs[*i];
  if (v.kind == ValueKind::kBool) return v.bool_value;
  if (v.kind == ValueKind::kInt) return v.int_value != 0;
  return std::nullopt;
}

// Size of `dim` (negative counts from the end) of a recorded tensor.
std::optional<int64_t> dimSize(const core::TensorValue* t, int64_t dim) {
  if (!t) return std::nullopt;
  const auto rank = static_cast<int64_t>(t->shape.size());
  if (rank == 0) return t->numel > 0 ? std::optional<int64_t>(1) : std::nullopt;
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank) return std::nullopt;
  return t->shape[static_cast<size_t>(dim)];
}

std::optional<IntFill> below(std::optional<int64_t> bound, const char* rule) {
  if (!bound || *bound <= 0) return std::nullopt;
  IntFill f;
  f.low = 0;
  f.high = *bound - 1;
  f.rule = rule;
  return f;
}

// --- generators -------------------------------------------------------------

// embedding(weight, indices, ...): rows of the table.
std::optional<IntFill> embedding(const Node& n, size_t i, int) {
  if (!isArg(n, i, "indices")) return std::nullopt;
  return below(dimSize(tensorArg(n, "weight"), 0), "embedding: indices < rows");
}

// embedding_bag(weight, indices, offsets, ..., include_last_offset, ...)
std::optional<IntFill> embeddingBag(const Node& n, size_t i, int) {
  if (isArg(n, i, "indices")) {
    return below(dimSize(tensorArg(n, "weight"), 0), "embedding_bag: indices < rows");
  }
  if (isArg(n, i, "offsets")) {
    const auto* indices = tensorArg(n, "indices");
    if (!indices) return std::nullopt;
    IntFill f;
    f.kind = IntFill::Kind::kOffsets;
    f.total = indices->numel;
    f.last_equals_total = boolArg(n, "include_last_offset").value_or(false);
    f.rule = "embedding_bag: offsets from 0, <= len(indices)";
    return f;
  }
  return std::nullopt;
}

// *_backward(grad, indices, num_weights, ...)
std::optional<IntFill> embeddingBackward(const Node& n, size_t i, int e) {
  if (isArg(n, i, "indices")) {
    return below(intArg(n, "num_weights"), "embedding backward: indices < num_weights");
  }
  if (isArg(n, i, "offsets")) return embeddingBag(n, i, e);
  return std::nullopt;
}

// gather/scatter/index_select/index_add...(self, dim, index, ...)
std::optional<IntFill> indexAlongDim(const Node& n, size_t i, int) {
  if (!isArg(n, i, "index")) return std::nullopt;
  auto dim = intArg(n, "dim").value_or(0);
  return below(dimSize(tensorArg(n, "self"), dim), "index < self.size(dim)");
}

// index.Tensor / index_put(self, indices Tensor?[], ...): element k indexes dim k.
std::optional<IntFill> advancedIndex(const Node& n, size_t i, int e) {
  if (!isArg(n, i, "indices") || e < 0) return std::nullopt;
  return below(dimSize(tensorArg(n, "self"), e), "indices[k] < self.size(k)");
}

// nll_loss*/cross_entropy_loss(self, target, ...): classes are dim 1 (dim 0 for 1-D input).
std::optional<IntFill> classTarget(const Node& n, size_t i, int) {
  if (!isArg(n, i, "target")) return std::nullopt;
  const auto* self = tensorArg(n, "self");
  if (!self) return std::nullopt;
  const int64_t dim = self->shape.size() == 1 ? 0 : 1;
  return below(dimSize(self, dim), "target < classes");
}

std::optional<IntFill> take(const Node& n, size_t i, int) {
  if (!isArg(n, i, "index")) return std::nullopt;
  const auto* self = tensorArg(n, "self");
  return below(self ? std::optional<int64_t>(self->numel) : std::nullopt, "take: index < numel");
}

std::optional<IntFill> oneHot(const Node& n, size_t i, int) {
  if (!isArg(n, i, "self")) return std::nullopt;
  return below(intArg(n, "num_classes"), "one_hot: values < num_classes");
}

// max_pool*_with_indices_backward(..., self, ..., indices): flat offsets into
// each input plane (H*W for 2-d, D*H*W for 3-d).
std::optional<IntFill> poolIndices(const Node& n, size_t i, int, int spatial_dims) {
  if (!isArg(n, i, "indices")) return std::nullopt;
  const auto* self = tensorArg(n, "self");
  if (!self || self->shape.size() < static_cast<size_t>(spatial_dims)) return std::nullopt;
  int64_t plane = 1;
  for (size_t d = self->shape.size() - spatial_dims; d < self->shape.size(); ++d) {
    plane *= self->shape[d];
  }
  return below(plane, "pool indices < plane size");
}

const std::vector<std::pair<std::string, ValueGenerator>> kRegistry = {
    {"aten::embedding", {"indices < weight rows", embedding}},
    {"aten::embedding_bag", {"indices < rows, offsets monotonic", embeddingBag}},
    {"aten::_embedding_bag", {"indices < rows, offsets monotonic", embeddingBag}},
    {"aten::_embedding_bag_forward_only", {"indices < rows, offsets monotonic", embeddingBag}},
    {"aten::embedding_backward", {"indices < num_weights", embeddingBackward}},
    {"aten::embedding_dense_backward", {"indices < num_weights", embeddingBackward}},
    {"aten::_embedding_bag_backward", {"indices < num_weights", embeddingBackward}},
    {"aten::_embedding_bag_dense_backward", {"indices < num_weights", embeddingBackward}},
    {"aten::index_select", {"index < self.size(dim)", indexAlongDim}},
    {"aten::gather", {"index < self.size(dim)", indexAlongDim}},
    {"aten::scatter", {"index < self.size(dim)", indexAlongDim}},
    {"aten::scatter_", {"index < self.size(dim)", indexAlongDim}},
    {"aten::scatter_add", {"index < self.size(dim)", indexAlongDim}},
    {"aten::scatter_add_", {"index < self.size(dim)", indexAlongDim}},
    {"aten::scatter_reduce", {"index < self.size(dim)", indexAlongDim}},
    {"aten::scatter_reduce_", {"index < self.size(dim)", indexAlongDim}},
    {"aten::index_add", {"index < self.size(dim)", indexAlongDim}},
    {"aten::index_add_", {"index < self.size(dim)", indexAlongDim}},
    {"aten::index_copy", {"index < self.size(dim)", indexAlongDim}},
    {"aten::index_copy_", {"index < self.size(dim)", indexAlongDim}},
    {"aten::index_fill", {"index < self.size(dim)", indexAlongDim}},
    {"aten::index_fill_", {"index < self.size(dim)", indexAlongDim}},
    {"aten::index", {"indices[k] < self.size(k)", advancedIndex}},
    {"aten::index_put", {"indices[k] < self.size(k)", advancedIndex}},
    {"aten::index_put_", {"indices[k] < self.size(k)", advancedIndex}},
    {"aten::_index_put_impl_", {"indices[k] < self.size(k)", advancedIndex}},
    {"aten::nll_loss", {"target < classes", classTarget}},
    {"aten::nll_loss_nd", {"target < classes", classTarget}},
    {"aten::nll_loss_forward", {"target < classes", classTarget}},
    {"aten::nll_loss_backward", {"target < classes", classTarget}},
    {"aten::nll_loss2d", {"target < classes", classTarget}},
    {"aten::nll_loss2d_forward", {"target < classes", classTarget}},
    {"aten::nll_loss2d_backward", {"target < classes", classTarget}},
    {"aten::cross_entropy_loss", {"target < classes", classTarget}},
    {"aten::take", {"index < numel(self)", take}},
    {"aten::one_hot", {"values < num_classes", oneHot}},
    {"aten::max_pool2d_with_indices_backward",
     {"indices < H*W", [](const Node& n, size_t i, int e) { return poolIndices(n, i, e, 2); }}},
    {"aten::max_pool3d_with_indices_backward",
     {"indices < D*H*W", [](const Node& n, size_t i, int e) { return poolIndices(n, i, e, 3); }}},
};

const std::unordered_map<std::string, const ValueGenerator*>& registryIndex() {
  static const std::unordered_map<std::string, const ValueGenerator*> index = [] {
    std::unordered_map<std::string, const ValueGenerator*> m;
    for (const auto& [name, gen] : kRegistry) m.emplace(name, &gen);
    return m;
  }();
  return index;
}

// Normalisation ops, keyed by name without overload; their scale and
// variance arguments must be positive.
constexpr const char* kNormalisationOps[] = {
    "aten::batch_norm",
    "aten::native_batch_norm",
    "aten::_batch_norm_impl_index",
    "aten::_native_batch_norm_legit",
    "aten::cudnn_batch_norm",
    "aten::miopen_batch_norm",
    "aten::native_batch_norm_backward",
    "aten::batch_norm_backward",
    "aten::cudnn_batch_norm_backward",
    "aten::_batch_norm_impl_index_backward",
    "aten::batch_norm_elemt",
    "aten::instance_norm",
    "aten::layer_norm",
    "aten::native_layer_norm",
    "aten::native_layer_norm_backward",
    "aten::group_norm",
    "aten::native_group_norm",
    "aten::native_group_norm_backward",
};

// Linear and convolution layers, keyed by name without overload: their weight
// and bias take the scale of PyTorch's default initialisation.
constexpr const char* kWeightedLayerOps[] = {
    "aten::linear",
    "aten::conv1d",
    "aten::conv2d",
    "aten::conv3d",
    "aten::convolution",
    "aten::_convolution",
    "aten::conv_transpose1d",
    "aten::conv_transpose2d",
    "aten::conv_transpose3d",
    "aten::cudnn_convolution",
    "aten::mkldnn_convolution",
};

template <size_t N>
bool isOneOf(const std::string& name, const char* const (&names)[N]) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

// nn.Linear / nn.ConvNd draw weight and bias from uniform(±1/sqrt(fan_in)),
// fan_in = the weight's elements per output channel. Values at [-1, 1) made
// a layer's outputs sqrt(fan_in/3) times larger than the original's (the
// bundled CNN's logits 14.5 against 0.3), and its gradients with them.
std::optional<FloatFill> layerInitFill(const Node& node, const std::string& arg) {
  if (arg != "weight" && arg != "bias") return std::nullopt;
  const core::TensorValue* weight = tensorArg(node, "weight");
  if (!weight || weight->shape.size() < 2) return std::nullopt;
  int64_t fan_in = 1;
  for (size_t d = 1; d < weight->shape.size(); ++d) fan_in *= weight->shape[d];
  if (fan_in <= 0) return std::nullopt;
  FloatFill fill;
  fill.specific = true;
  fill.high = 1.0 / std::sqrt(double(fan_in));
  fill.low = -fill.high;
  fill.rule = fmt::format("{} of a linear/conv layer: uniform +-1/sqrt(fan_in {})", arg, fan_in);
  return fill;
}

// The saved output a softmax backward reads: probabilities (or their logs)
// over `dim`, around the uniform 1/C. A composite forward (cross_entropy_loss
// calls log_softmax inside) does not return it, so the replay makes it up.
// On the bundled CNN, with this output and total_weight (below) at [-1, 1),
// the loss gradient was 100x too large and one replayed SGD step took the
// logits from 0.3 to 490; with this rule alone to 38, with both to 2.2.
std::optional<FloatFill> softmaxOutputFill(const Node& node, const std::string& arg) {
  if (arg != "output") return std::nullopt;
  const std::string name = node.schema->qualifiedName();
  const bool log = name == "aten::_log_softmax_backward_data";
  if (!log && name != "aten::_softmax_backward_data") return std::nullopt;
  const auto classes = dimSize(tensorArg(node, "output"), intArg(node, "dim").value_or(-1));
  if (!classes || *classes <= 0) return std::nullopt;
  const double c = double(*classes);
  FloatFill fill;
  fill.specific = true;
  if (log) {
    fill.low = -std::log(c) - 0.5;
    fill.high = -std::log(c) + 0.5;
    fill.rule = fmt::format("log_softmax output: uniform -ln({}) +- 0.5", *classes);
  } else {
    fill.low = 0.0;
    fill.high = 2.0 / c;
    fill.rule = fmt::format("softmax output: uniform [0, 2/{})", *classes);
  }
  return fill;
}

// nll_loss's total_weight, which its backward divides by under mean
// reduction: the count of targets (their summed class weights when weighted,
// which this takes as 1 each). nll_loss_forward computes it inside
// cross_entropy_loss, so the replay makes it up; at [-1, 1) it scaled the
// loss gradient by 10x and more.
std::optional<FloatFill> lossTotalWeightFill(const Node& node, const std::string& arg) {
  if (arg != "total_weight") return std::nullopt;
  const std::string name = node.schema->qualifiedName();
  if (name != "aten::nll_loss_backward" && name != "aten::nll_loss2d_backward") return std::nullopt;
  const core::TensorValue* target = tensorArg(node, "target");
  if (!target || target->numel <= 0) return std::nullopt;
  FloatFill fill;
  fill.specific = true;
  fill.low = fill.high = double(target->numel);
  fill.rule = fmt::format("nll_loss total_weight: the {} targets", target->numel);
  return fill;
}

bool isPositiveNormArgument(const std::string& arg) {
  return arg == "weight" || arg == "running_var" || arg == "save_invstd" || arg == "save_var" ||
         arg == "rstd" || arg == "invstd";
}

}  // namespace

FloatFill floatFillFor(const Node& node, size_t input_index) {
  FloatFill fill;
  if (!node.schema || input_index >= node.schema->arguments.size()) return fill;
  const std::string& arg = node.schema->arguments[input_index].name;
  if (isOneOf(node.schema->qualifiedName(), kWeightedLayerOps)) {
    if (auto layer = layerInitFill(node, arg)) return *layer;
    return fill;
  }
  if (auto probabilities = softmaxOutputFill(node, arg)) return *probabilities;
  if (auto total = lossTotalWeightFill(node, arg)) return *total;
  if (!isOneOf(node.schema->qualifiedName(), kNormalisationOps)) return fill;
  if (isPositiveNormArgument(arg)) {
    fill.specific = true;
    fill.low = 0.5;
    fill.high = 1.5;
    fill.rule = "normalisation " + arg + ": uniform [0.5, 1.5)";
  }
  return fill;
}

namespace {
FloatFill specificUniform(double low, double high, std::string rule) {
  FloatFill fill;
  fill.low = low;
  fill.high = high;
  fill.rule = std::move(rule);
  fill.specific = true;
  return fill;
}
}  // namespace

FloatFill wrappedNumberFill() {
  return specificUniform(0.5, 1.0, "wrapped Python number: uniform [0.5, 1)");
}

FloatFill nonNegativeFill() {
  return specificUniform(0.0, 1.0, "read by sqrt or log: uniform [0, 1)");
}

const std::vector<std::pair<std::string, ValueGenerator>>& valueGeneratorRegistry() {
  return kRegistry;
}

std::optional<std::pair<int64_t, int64_t>> tensorRangeFor(const Node& node, size_t input_index) {
  if (node.tensor_range.empty()) return std::nullopt;
  auto doc = nlohmann::json::parse(node.tensor_range, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return std::nullopt;
  auto it = doc.find(std::to_string(input_index));
  if (it == doc.end() || !it->is_array() || it->size() != 2) return std::nullopt;
  const auto& lo = (*it)[0];
  const auto& hi = (*it)[1];
  if (!lo.is_number() || !hi.is_number()) return std::nullopt;
  auto low = lo.get<int64_t>();
  auto high = hi.get<int64_t>();
  if (high < low) return std::nullopt;
  return std::make_pair(low, high);
}

bool isLookupIndices(const Node& node, size_t input_index) {
  if (!node.schema) return false;
  const std::string name = node.schema->qualifiedName();
  const bool lookup = name == "aten::embedding" || name == "aten::embedding_bag" ||
                      name == "aten::_embedding_bag" ||
                      name == "aten::_embedding_bag_forward_only";
  return lookup && isArg(node, input_index, "indices");
}

std::optional<IntFill> withIndexDistribution(std::optional<IntFill> fill, const Node& node,
                                             size_t input_index, const core::IndexLaw& law) {
  if (!fill || law.zipf <= 0 || fill->kind != IntFill::Kind::kUniform) return fill;
  if (!isLookupIndices(node, input_index)) return fill;
  fill->kind = IntFill::Kind::kZipf;
  fill->exponent = law.zipf;
  fill->zipf_first_row = law.first_row;
  fill->rule = law.first_row > 0
                   ? fmt::format("{}; Zipf exponent {} from the table's row {} "
                                 "(--index-distribution)",
                                 fill->rule, law.zipf, law.first_row)
                   : fmt::format("{}; Zipf exponent {} (--index-distribution)", fill->rule,
                                 law.zipf);
  return fill;
}

std::optional<IntFill> integerFillFor(const Node& node, size_t input_index, int element_index) {
  if (element_index < 0) {
    if (auto range = tensorRangeFor(node, input_index)) {
      IntFill f;
      f.low = range->first;
      f.high = range->second;
      f.rule = "tensor_range";
      return f;
    }
  }
  const std::string key = node.schema ? node.schema->qualifiedName() : node.name.str();
  const auto& index = registryIndex();
  auto it = index.find(key);
  if (it == index.end()) return std::nullopt;
  return it->second->fill(node, input_index, element_index);
}

}  // namespace tracetwin::replay
