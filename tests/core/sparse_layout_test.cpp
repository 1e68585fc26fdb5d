// core::inferSparseTensors on hand-built graphs: the sparse gradient of an
// EmbeddingBag(sparse=True) step as PyTorch 1.13's ET records it (data/
// embbag_sparse.et.json.gz, tensor ids kept): zero_grad clears the gradient
// (sparse_resize_and_clear_), the backward returns a sparse COO tensor,
// AccumulateGrad adds it in place, SGD's add_ reads it into the dense weight.
#include "core/sparse_layout.h"

#include <gtest/gtest.h>

#include <memory>

#include "core/op_schema.h"
#include "tests/support/graphs.h"

namespace tracetwin::core {
namespace {

using testing::boolValue;
using testing::doubleValue;
using testing::intValue;
using testing::noneValue;
using testing::opNode;
using testing::tensorValue;
using testing::undefinedTensor;

// As the ET records a sparse tensor: [id, 0, 0, 0, 0, ""] with a real dtype.
Value storagelessTensor(int64_t id, std::vector<int64_t> shape) {
  Value v = tensorValue(id, 0, std::move(shape), "float", 0, "");
  v.tensor->numel = 0;
  return v;
}

// _embedding_bag_backward(grad, indices, offsets, offset2bag, bag_size,
// maximum_indices, num_weights, scale_grad_by_freq, mode, sparse, psw, padding_idx)
Node embeddingBagBackward(bool sparse, Value out) {
  return opNode("aten::_embedding_bag_backward",
                {tensorValue(75, 183, {256, 32}), tensorValue(54, 55, {7680}, "long int", 8),
                 tensorValue(56, 57, {256}, "long int", 8), tensorValue(64, 17, {0}, "long int", 8),
                 tensorValue(66, 67, {256}, "long int", 8),
                 tensorValue(70, 76, {256}, "long int", 8), intValue(200000), boolValue(false),
                 intValue(0), boolValue(sparse), undefinedTensor(59), intValue(-1)},
                {std::move(out)});
}

Graph sgdStepWithSparseGradient() {
  return testing::graphOfOps({
      opNode("aten::sparse_resize_and_clear_",
             {storagelessTensor(12, {200000, 32}), testing::intList({200000, 32}), intValue(2),
              intValue(0)},
             {storagelessTensor(12, {200000, 32})}),
      embeddingBagBackward(true, storagelessTensor(264, {200000, 32})),
      opNode("aten::_values", {storagelessTensor(264, {200000, 32})},
             {tensorValue(287, 247, {7680, 32})}),
      opNode(
          "aten::add_",
          {storagelessTensor(12, {200000, 32}), storagelessTensor(264, {200000, 32}), intValue(1)},
          {storagelessTensor(12, {200000, 32})}),
      opNode("aten::add_",
             {tensorValue(52, 53, {200000, 32}), storagelessTensor(12, {200000, 32}),
              doubleValue(-0.01)},
             {tensorValue(52, 53, {200000, 32})}),
  });
}

TEST(SparseLayout, FollowsTheEmbeddingGradientIntoTheOptimizer) {
  const Graph g = sgdStepWithSparseGradient();
  const SparseTensors sparse = inferSparseTensors(g);
  ASSERT_EQ(sparse.size(), 2u);
  // The backward's result: one value row per looked-up index (7,680 = 256 x 30).
  ASSERT_TRUE(sparse.count(264));
  EXPECT_EQ(sparse.at(264).nnz, 7680);
  EXPECT_EQ(sparse.at(264).sparse_dim, 1);
  EXPECT_EQ(g.node(sparse.at(264).evidence).name, "aten::_embedding_bag_backward");
  // The .grad zero_grad clears and SGD reads: known sparse before any producer.
  ASSERT_TRUE(sparse.count(12));
  EXPECT_EQ(g.node(sparse.at(12).evidence).name, "aten::sparse_resize_and_clear_");
  EXPECT_FALSE(sparse.count(52));  // the dense weight SGD updates
}

TEST(SparseLayout, DenseBackwardAndUndefinedTensorsAreNotSparse) {
  const Graph g = testing::graphOfOps({
      // sparse=False: the dense gradient has storage, but even an id with no
      // storage is not marked by a producer whose flag is off.
      embeddingBagBackward(false, storagelessTensor(300, {200000, 32})),
      opNode("aten::add_", {storagelessTensor(301, {4, 4}), tensorValue(2, 2, {4, 4}), intValue(1)},
             {storagelessTensor(301, {4, 4})}),
      // An absent Tensor? argument reaching a sparse-only op is not a candidate.
      opNode("aten::_values", {undefinedTensor(59)}, {tensorValue(5, 5, {0, 32})}),
  });
  EXPECT_TRUE(inferSparseTensors(g).empty());
}

// The pre-check that skips the passes classifies a name once per recorded
// schema, but still looks at every node's tensor: a dense backward first
// must not hide a sparse one of the same schema after it.
TEST(SparseLayout, ASparseBackwardAfterADenseOneOfTheSameSchemaIsFound) {
  Node dense = embeddingBagBackward(false, tensorValue(300, 301, {200000, 32}));
  dense.schema = std::make_shared<const OpSchema>(
      parseOpSchema("aten::_embedding_bag_backward(Tensor grad, Tensor indices, Tensor offsets, "
                    "Tensor offset2bag, Tensor bag_size, Tensor maximum_indices, SymInt "
                    "num_weights, bool scale_grad_by_freq, int mode, bool sparse, Tensor? "
                    "per_sample_weights, int padding_idx=-1) -> Tensor",
                    "test"));
  Node sparse_op = embeddingBagBackward(true, storagelessTensor(264, {200000, 32}));
  sparse_op.schema = dense.schema;
  const Graph g = testing::graphOfOps({dense, sparse_op});
  ASSERT_EQ(g.node(3).schema.get(), g.node(4).schema.get());
  const SparseTensors sparse = inferSparseTensors(g);
  EXPECT_TRUE(sparse.count(264));
  EXPECT_FALSE(sparse.count(300));
}

TEST(SparseLayout, CloneAndCoalesceOfASparseTensorAreSparse) {
  const Graph g = testing::graphOfOps({
      opNode("aten::_sparse_coo_tensor_unsafe",
             {tensorValue(1, 1, {1, 100}, "long int", 8), tensorValue(2, 2, {100, 8}),
              testing::intList({1000, 8}), noneValue(), noneValue(), noneValue(), noneValue()},
             {storagelessTensor(3, {1000, 8})}),
      opNode("aten::coalesce", {storagelessTensor(3, {1000, 8})},
             {storagelessTensor(4, {1000, 8})}),
      opNode("aten::clone", {storagelessTensor(4, {1000, 8}), noneValue()},
             {storagelessTensor(5, {1000, 8})}),
  });
  const SparseTensors sparse = inferSparseTensors(g);
  ASSERT_EQ(sparse.size(), 3u);
  EXPECT_EQ(sparse.at(3).nnz, 100);
  EXPECT_EQ(sparse.at(3).sparse_dim, 1);
  EXPECT_TRUE(sparse.count(5));
}

}  // namespace
}  // namespace tracetwin::core
