// The rows a sparse gradient touches, for the kernel models. SGD's
// `weight.add_(grad, alpha=-lr)` with a sparse COO grad (core/sparse_layout.h)
// reads and writes only the grad's nnz rows of the weight, not the table: on a
// 200,000 x 32 table with 7,680 looked-up rows, 471 us against 1,532 us for
// the dense add (PyTorch 1.13, one thread, interleaved medians, load 4.5).
// The trace gives both operands the table's shape, and the sparse one no
// bytes at all, so the features would see a dense add over every row.
#pragma once

#include <optional>
#include <vector>

#include "core/graph.h"
#include "core/sparse_layout.h"
#include "predictors/kernels/sparse_add_model.h"

namespace tracetwin::predictors {

// When `node` reads a sparse tensor with a known nnz: a copy of it in which
// that operand and every dense operand of the same shape (the table it
// updates) are dense [nnz, rest...] tensors, i.e. the rows touched, so
// computeFeatures costs the op by them. Returns `node` itself otherwise.
const core::Node& sparseRowsNode(const core::Node& node, const core::SparseTensors& sparse,
                                 core::Node* scratch);

// When `node` is an add (add_, add) of a sparse tensor with a known nnz into
// a dense table (its first input, defined and not sparse): the shape the sparse add model costs. Distinct rows from
// `index_reuse` (the lookups' histogram, PredictOptions::index_reuse) when
// given, else as many as nnz uniform draws from the table's rows hit.
std::optional<SparseAddShape> sparseAddShape(const core::Node& node,
                                             const core::SparseTensors& sparse,
                                             const std::vector<double>* index_reuse);

}  // namespace tracetwin::predictors
