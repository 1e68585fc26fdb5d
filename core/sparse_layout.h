// Which tensors of a trace are sparse COO. An execution trace records no
// layout: a sparse tensor is recorded as [id, 0, 0, 0, 0, ""] (no storage,
// like an undefined tensor) but with a real element type and shape. Replaying
// it as undefined fails the optimizer's add_; replaying it dense turns SGD's
// update of the 7,680 looked-up rows of a 200,000 x 32 table into a dense add
// over all 6.4 M elements. So the ops that make and use sparse tensors are
// recognised and followed through tensor ids:
//  - producers: embedding_bag's sparse backward (_embedding_bag_backward with
//    sparse=True, _embedding_bag_sparse_backward), embedding_sparse_backward,
//    _sparse_coo_tensor_* / sparse_coo_tensor, coalesce;
//  - sparse-only consumers: _indices, _values, sparse_dim, _nnz,
//    is_coalesced, _coalesced_, sparse_resize_and_clear_ (zero_grad of a
//    sparse gradient) ...: their first input is sparse;
//  - propagation: clone/add/mul/neg/detach of a sparse first input is sparse.
// Torch-free: the replayer builds these tensors as sparse COO and the
// predictor costs their adds by the rows touched (nnz), not the table's rows.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "core/graph.h"

namespace tracetwin::core {

struct SparseTensor {
  int64_t sparse_dim = 1;     // embedding gradients: 1 (rows), dense_dim 1 (dim)
  int64_t nnz = 0;            // largest non-zero count the trace shows (0: unknown)
  NodeId evidence = kNoNode;  // the node that first showed it sparse (for reports)
};

// By tensor id. Only tensor values recorded without storage (see above) and
// with a known element type are candidates, so a dense tensor whose id was
// reused is never marked.
using SparseTensors = std::unordered_map<int64_t, SparseTensor>;

SparseTensors inferSparseTensors(const Graph& graph);

// A recorded tensor value that could be sparse: no storage, known dtype.
bool sparseCandidate(const TensorValue& t);

}  // namespace tracetwin::core
