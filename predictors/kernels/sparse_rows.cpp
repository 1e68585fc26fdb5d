#include "predictors/kernels/sparse_rows.h"

#include <algorithm>
#include <vector>

#include "predictors/kernels/feature_shapes.h"
#include "predictors/kernels/features.h"
#include "predictors/kernels/node_args.h"

namespace tracetwin::predictors {
namespace {

const core::SparseTensor* sparseOf(const core::Value& v, const core::SparseTensors& sparse) {
  if (!v.isTensor() || !core::sparseCandidate(*v.tensor)) return nullptr;
  auto it = sparse.find(v.tensor->tensor_id);
  return it == sparse.end() || it->second.nnz <= 0 ? nullptr : &it->second;
}

// [nnz, shape[sparse_dim:]...], contiguous, with storage: what the rows are.
void toRows(core::TensorValue& t, const core::SparseTensor& s) {
  std::vector<int64_t> shape{s.nnz};
  const size_t from = size_t(std::max<int64_t>(s.sparse_dim, 1));
  if (from < t.shape.size()) shape.insert(shape.end(), t.shape.begin() + from, t.shape.end());
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  if (t.itemsize == 0) t.itemsize = core::dtypeItemsize(t.dtype);
  if (t.storage_id == 0) t.storage_id = -t.tensor_id;  // defined: counted by its bytes
  t.offset = 0;
  t.numel = numel;
  t.shape = std::move(shape);
  t.strides.clear();
}

}  // namespace

const core::Node& sparseRowsNode(const core::Node& node, const core::SparseTensors& sparse,
                                 core::Node* scratch) {
  if (sparse.empty()) return node;
  const core::SparseTensor* found = nullptr;
  std::vector<int64_t> table_shape;
  for (const core::Value& v : node.inputs) {
    if (const core::SparseTensor* s = sparseOf(v, sparse)) {
      found = s;
      table_shape = v.tensor->shape;
      break;
    }
  }
  if (found == nullptr) return node;
  *scratch = node;
  auto rewrite = [&](std::vector<core::Value>& values) {
    for (core::Value& v : values) {
      if (!v.isTensor() || v.tensor->shape != table_shape) continue;
      if (core::sparseCandidate(*v.tensor) || v.tensor->defined()) toRows(*v.tensor, *found);
    }
  };
  rewrite(scratch->inputs);
  rewrite(scratch->outputs);
  return *scratch;
}

std::optional<SparseAddShape> sparseAddShape(const core::Node& node,
                                             const core::SparseTensors& sparse,
                                             const std::vector<double>* index_reuse) {
  if (sparse.empty()) return std::nullopt;
  const std::string op = baseOpName(node.name);
  if (op != "add_" && op != "add") return std::nullopt;
  // Into a dense table: a sparse self (a gradient accumulating another) only
  // concatenates, without the coalesce.
  if (node.inputs.empty() || !node.inputs[0].isTensor() || !node.inputs[0].tensor->defined() ||
      sparseOf(node.inputs[0], sparse) != nullptr) {
    return std::nullopt;
  }
  for (const core::Value& v : node.inputs) {
    const core::SparseTensor* s = sparseOf(v, sparse);
    if (s == nullptr || v.tensor->shape.size() < 2) continue;
    SparseAddShape shape;
    shape.nnz = double(s->nnz);
    shape.rows = double(v.tensor->shape[0]);
    shape.dim = 1;
    for (size_t d = 1; d < v.tensor->shape.size(); ++d) shape.dim *= double(v.tensor->shape[d]);
    shape.unique = index_reuse != nullptr && (index_reuse->size() == size_t(kReuseBins) ||
                                              index_reuse->size() == size_t(kReuseValuesWithUnique))
                       ? uniqueFraction(*index_reuse) * shape.nnz
                       : expectedUniqueRows(shape.nnz, shape.rows);
    return shape;
  }
  return std::nullopt;
}

}  // namespace tracetwin::predictors
