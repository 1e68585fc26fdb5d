#include "predictors/kernels/sparse_rows.h"

#include <algorithm>
#include <vector>

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

}  // namespace tracetwin::predictors
