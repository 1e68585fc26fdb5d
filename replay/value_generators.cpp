#include "replay/value_generators.h"

#include <algorithm>
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
bool isNormalisation(const std::string& name) {
  static const char* const kNames[] = {
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
  for (const char* n : kNames) {
    if (name == n) return true;
  }
  return false;
}

bool isPositiveNormArgument(const std::string& arg) {
  return arg == "weight" || arg == "running_var" || arg == "save_invstd" || arg == "save_var" ||
         arg == "rstd" || arg == "invstd";
}

}  // namespace

FloatFill floatFillFor(const Node& node, size_t input_index) {
  FloatFill fill;
  if (!node.schema || input_index >= node.schema->arguments.size()) return fill;
  if (!isNormalisation(node.schema->qualifiedName())) return fill;
  const std::string& arg = node.schema->arguments[input_index].name;
  if (isPositiveNormArgument(arg)) {
    fill.low = 0.5;
    fill.high = 1.5;
    fill.rule = "normalisation " + arg + ": uniform [0.5, 1.5)";
  }
  return fill;
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
  const std::string key = node.schema ? node.schema->qualifiedName() : node.name;
  const auto& index = registryIndex();
  auto it = index.find(key);
  if (it == index.end()) return std::nullopt;
  return it->second->fill(node, input_index, element_index);
}

}  // namespace tracetwin::replay
