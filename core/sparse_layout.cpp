#include "core/sparse_layout.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace tracetwin::core {
namespace {

std::string baseName(const std::string& name) {
  const auto dot = name.find('.');
  return dot == std::string::npos ? name : name.substr(0, dot);
}

const TensorValue* tensorAt(const std::vector<Value>& values, size_t i) {
  if (i >= values.size() || !values[i].isTensor()) return nullptr;
  return &*values[i].tensor;
}

bool boolAt(const Node& n, size_t i) {
  return i < n.inputs.size() && n.inputs[i].kind == ValueKind::kBool && n.inputs[i].bool_value;
}

int64_t dimOr(const TensorValue* t, size_t d, int64_t fallback) {
  return t != nullptr && d < t->shape.size() ? t->shape[d] : fallback;
}

// Ops whose output 0 is sparse. The value: the `sparse` flag's input index
// (the op makes a sparse result only when it is true), or -1 (always).
const std::unordered_map<std::string, int>& producers() {
  static const std::unordered_map<std::string, int> kProducers = {
      // _embedding_bag_backward(grad, indices, offsets, offset2bag, bag_size,
      //   maximum_indices, num_weights, scale_grad_by_freq, mode, sparse, ...)
      {"aten::_embedding_bag_backward", 9},
      // embedding_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq, sparse)
      {"aten::embedding_backward", 5},
      {"aten::_embedding_bag_sparse_backward", -1},
      {"aten::embedding_sparse_backward", -1},
      {"aten::_sparse_coo_tensor_unsafe", -1},
      {"aten::_sparse_coo_tensor_with_dims_and_tensors", -1},
      {"aten::_sparse_coo_tensor_with_dims", -1},
      {"aten::sparse_coo_tensor", -1},
      {"aten::to_sparse", -1},
  };
  return kProducers;
}

// Ops that take only a sparse first input.
const std::unordered_set<std::string>& sparseOnlyConsumers() {
  static const std::unordered_set<std::string> kConsumers = {
      "aten::_indices",       "aten::_values",      "aten::indices",
      "aten::values",         "aten::sparse_dim",   "aten::dense_dim",
      "aten::_nnz",           "aten::is_coalesced", "aten::_coalesced_",
      "aten::coalesce",       "aten::_coalesce",    "aten::sparse_resize_and_clear_",
      "aten::sparse_resize_", "aten::sparse_mask",  "aten::to_dense",
  };
  return kConsumers;
}

// Out-of-place ops whose output is sparse when their first input is.
const std::unordered_set<std::string>& propagators() {
  static const std::unordered_set<std::string> kPropagators = {
      "aten::clone", "aten::add",      "aten::mul",       "aten::neg", "aten::detach",
      "aten::alias", "aten::coalesce", "aten::_coalesce", "aten::sub", "aten::div",
  };
  return kPropagators;
}

class Inference {
 public:
  // The evidence is the first producer when there is one, else the first
  // sparse-only consumer.
  void mark(const TensorValue* t, NodeId node, bool producer) {
    if (t == nullptr || !sparseCandidate(*t)) return;
    auto [it, added] = out_.try_emplace(t->tensor_id, SparseTensor{1, 0, node});
    if (producer && !added && produced_.insert(t->tensor_id).second) it->second.evidence = node;
    if (producer) produced_.insert(t->tensor_id);
  }
  bool isSparse(const TensorValue* t) const {
    return t != nullptr && sparseCandidate(*t) && out_.count(t->tensor_id) > 0;
  }
  SparseTensor* find(const TensorValue* t) {
    if (!isSparse(t)) return nullptr;
    return &out_.at(t->tensor_id);
  }
  SparseTensors take() { return std::move(out_); }

 private:
  SparseTensors out_;
  std::unordered_set<int64_t> produced_;
};

bool isInPlace(const std::string& op) {
  return op.size() >= 2 && op.back() == '_' && op[op.size() - 2] != '_';
}

// What a node shows of a sparse tensor's structure: nnz and sparse_dim.
void readStructure(const Node& n, const std::string& op, Inference& inf) {
  if (isInPlace(op) && inf.isSparse(tensorAt(n.inputs, 0)) && inf.isSparse(tensorAt(n.inputs, 1))) {
    // Accumulation: the self holds the other's rows too (uncoalesced: nnz adds
    // up; after zero_grad's clear, the first add gives the backward's nnz).
    SparseTensor* self = inf.find(tensorAt(n.inputs, 0));
    const SparseTensor* other = inf.find(tensorAt(n.inputs, 1));
    self->nnz = std::max(self->nnz, other->nnz);
    self->sparse_dim = other->sparse_dim;
  } else if (op == "aten::_values" || op == "aten::values") {
    if (SparseTensor* s = inf.find(tensorAt(n.inputs, 0)))
      s->nnz = std::max(s->nnz, dimOr(tensorAt(n.outputs, 0), 0, 0));
  } else if (op == "aten::_indices" || op == "aten::indices") {
    if (SparseTensor* s = inf.find(tensorAt(n.inputs, 0))) {
      s->sparse_dim = dimOr(tensorAt(n.outputs, 0), 0, s->sparse_dim);
      s->nnz = std::max(s->nnz, dimOr(tensorAt(n.outputs, 0), 1, 0));
    }
  } else if (op == "aten::_sparse_coo_tensor_unsafe") {  // (indices, values, size)
    if (SparseTensor* s = inf.find(tensorAt(n.outputs, 0))) {
      s->sparse_dim = dimOr(tensorAt(n.inputs, 0), 0, s->sparse_dim);
      s->nnz = std::max(s->nnz, dimOr(tensorAt(n.inputs, 1), 0, 0));
    }
  } else if (op == "aten::_sparse_coo_tensor_with_dims_and_tensors") {
    // (sparse_dim, dense_dim, size, indices, values, ...)
    if (SparseTensor* s = inf.find(tensorAt(n.outputs, 0))) {
      if (!n.inputs.empty() && n.inputs[0].kind == ValueKind::kInt)
        s->sparse_dim = n.inputs[0].int_value;
      s->nnz = std::max(s->nnz, dimOr(tensorAt(n.inputs, 4), 0, 0));
    }
  } else if (op == "aten::_embedding_bag_sparse_backward" ||
             op == "aten::embedding_sparse_backward" ||
             (op == "aten::_embedding_bag_backward" && boolAt(n, 9))) {
    // One value row per looked-up index, before coalescing.
    if (SparseTensor* s = inf.find(tensorAt(n.outputs, 0))) {
      const TensorValue* idx = tensorAt(n.inputs, 1);
      if (idx != nullptr) s->nnz = std::max(s->nnz, idx->numel);
    }
  }
}

}  // namespace

bool sparseCandidate(const TensorValue& t) {
  return !t.defined() && t.dtype != DType::kUnknown && !t.shape.empty();
}

namespace {

// Whether any node could make or use a sparse tensor: its name (without the
// overload) among the producers or the sparse-only consumers, and the tensor
// the passes below would mark (a producer's output 0, a consumer's input 0)
// storage-less (sparseCandidate). Every mark starts at such a node, so
// without one there is none. Most traces have none; the passes below cost a
// 100k-op prediction 15-20% (a substring and three hash lookups per node,
// three times), this check one lookup per node. A step with dense embedding
// gradients (_embedding_bag_backward with sparse=False) names a producer:
// the name alone let the passes run there (3-4% of the prediction).
bool mayHoldSparse(const Graph& graph) {
  static const std::unordered_map<std::string_view, bool> kNames = [] {
    std::unordered_map<std::string_view, bool> names;  // name -> a producer
    for (const auto& [name, flag] : producers()) names.emplace(name, true);
    for (const std::string& name : sparseOnlyConsumers()) names.emplace(name, false);
    return names;
  }();
  // -1: neither; 0: a sparse-only consumer; 1: a producer.
  auto kindOf = [](const std::string& name) {
    const std::string_view base = std::string_view(name).substr(0, name.find('.'));
    const auto it = kNames.find(base);
    return it == kNames.end() ? -1 : int(it->second);
  };
  // Once per recorded schema (every node of a schema has its name): reading
  // every node's name was 3% of a 100k-op prediction (cache misses).
  std::unordered_map<const OpSchema*, int> schema_kind;
  for (const Node& n : graph.nodes()) {
    int kind = -1;
    if (n.schema) {
      auto [it, added] = schema_kind.try_emplace(n.schema.get(), -1);
      if (added) it->second = kindOf(n.name);
      kind = it->second;
    } else {
      kind = kindOf(n.name);
    }
    if (kind < 0) continue;
    const TensorValue* t = kind == 1 ? tensorAt(n.outputs, 0) : tensorAt(n.inputs, 0);
    if (t != nullptr && sparseCandidate(*t)) return true;
  }
  return false;
}

}  // namespace

SparseTensors inferSparseTensors(const Graph& graph) {
  if (!mayHoldSparse(graph)) return {};
  // What the passes ask of a node's name, once per distinct name (interned:
  // its text's address names it). Cutting and hashing every node's name in
  // each of the three passes was ~2% of a joint 8-rank prediction.
  struct Roles {
    std::string base;  // without the overload
    bool consumer = false, propagator = false, in_place = false;
    bool producer = false;
    int sparse_flag = -1;  // a producer's `sparse` input, -1: always sparse
  };
  std::unordered_map<const char*, Roles> by_name;
  std::vector<const Roles*> roles;
  roles.reserve(graph.nodes().size());
  for (const Node& n : graph.nodes()) {
    auto [it, added] = by_name.try_emplace(n.name.view().data());
    Roles& r = it->second;
    if (added) {
      r.base = baseName(n.name);
      r.consumer = sparseOnlyConsumers().count(r.base) > 0;
      r.propagator = propagators().count(r.base) > 0;
      r.in_place = isInPlace(r.base);
      const auto p = producers().find(r.base);
      r.producer = p != producers().end();
      if (r.producer) r.sparse_flag = p->second;
    }
    roles.push_back(&r);
  }
  Inference inf;
  const auto& nodes = graph.nodes();
  // Consumers first: a sparse gradient zeroed by zero_grad is used before any
  // producer of it runs (sparse_resize_and_clear_ at the step's start).
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (roles[i]->consumer) inf.mark(tensorAt(nodes[i].inputs, 0), nodes[i].id, false);
  }
  // Producers and propagation in execution order (nodes are sorted by id).
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    const Roles& r = *roles[i];
    if (r.producer && (r.sparse_flag < 0 || boolAt(n, size_t(r.sparse_flag))))
      inf.mark(tensorAt(n.outputs, 0), n.id, true);
    if (r.propagator && inf.isSparse(tensorAt(n.inputs, 0)))
      inf.mark(tensorAt(n.outputs, 0), n.id, true);
    // In place, a storage-less self taking a sparse operand: a sparse .grad
    // AccumulateGrad adds the backward's result into (a dense self has storage).
    if (r.in_place && inf.isSparse(tensorAt(n.inputs, 1)))
      inf.mark(tensorAt(n.inputs, 0), n.id, false);
    // In place on a sparse self: the output is the self (same id), already marked.
  }
  for (size_t i = 0; i < nodes.size(); ++i) readStructure(nodes[i], roles[i]->base, inf);
  return inf.take();
}

}  // namespace tracetwin::core
