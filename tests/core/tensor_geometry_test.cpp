// core/tensor_geometry.h: which recorded tensors can exist.
#include "core/tensor_geometry.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace tracetwin::core {
namespace {

TensorValue tensor(int64_t numel, std::vector<int64_t> shape, std::vector<int64_t> strides = {},
                   int64_t offset = 0, int64_t itemsize = 4) {
  TensorValue t;
  t.tensor_id = 1;
  t.storage_id = 2;
  t.numel = numel;
  t.itemsize = itemsize;
  t.offset = offset;
  t.shape = std::move(shape);
  t.strides = std::move(strides);
  return t;
}

bool says(const TensorValue& t, const std::string& part, bool shape_recorded = true) {
  const std::string problem = tensorGeometryProblem(t, shape_recorded);
  EXPECT_NE(problem.find(part), std::string::npos) << "'" << problem << "' lacks '" << part << "'";
  return problem.find(part) != std::string::npos;
}

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(TensorGeometry, RealTensorsAreConsistent) {
  EXPECT_EQ(tensorGeometryProblem(tensor(4096, {32, 128}), true), "");
  EXPECT_EQ(tensorGeometryProblem(tensor(0, {0, 128}), true), "");  // empty, not undefined
  EXPECT_EQ(tensorGeometryProblem(tensor(1, {}), true), "");        // a 0-d scalar
  // A transposed view and an expanded one (stride 0) of a 4x8 storage.
  EXPECT_EQ(tensorGeometryProblem(tensor(32, {8, 4}, {1, 8}), true), "");
  EXPECT_EQ(tensorGeometryProblem(tensor(32, {4, 8}, {0, 1}), true), "");
  TensorValue undefined;  // [id,0,0,0,0,""]
  undefined.tensor_id = 9;
  EXPECT_EQ(tensorGeometryProblem(undefined, true), "");
  // Without a recorded shape, numel is not compared with the empty one.
  EXPECT_EQ(tensorGeometryProblem(tensor(4096, {}), false), "");
}

TEST(TensorGeometry, NegativeAndOverflowingShapes) {
  EXPECT_TRUE(says(tensor(4096, {-32, -128}), "shape [-32, -128]: a negative dimension"));
  EXPECT_TRUE(says(tensor(0, {int64_t{1} << 32, int64_t{1} << 32}), "more elements than 64 bits"));
  // One overflow in the middle of the product is caught even if later dims are 0.
  EXPECT_TRUE(says(tensor(0, {kMax, 2, 0}), "more elements than 64 bits"));
}

TEST(TensorGeometry, ShapeMustHoldTheRecordedNumel) {
  EXPECT_TRUE(says(tensor(4096, {32, 7}), "shape [32, 7] holds 224 elements"));
  EXPECT_TRUE(says(tensor(4096, {}), "shape [] holds 1 elements"));
}

TEST(TensorGeometry, SizesThatNoAllocatorCouldGive) {
  EXPECT_TRUE(says(tensor(4096, {4096}, {}, 0, 0), "itemsize 0 for a tensor of 4096 elements"));
  EXPECT_TRUE(says(tensor(4, {4}, {}, kMax), "beyond 64 bits"));
  EXPECT_TRUE(says(tensor(4, {4}, {kMax}), "reaches beyond 64 bits"));
  EXPECT_TRUE(says(tensor(4, {4}, {-1}), "a negative stride"));
  EXPECT_TRUE(says(tensor(kMax / 2, {kMax / 2}, {}, 0, 8), "bytes: beyond 64 bits"));
}

// A bad-input hunt: itemsize 2^40 on 16 floats predicted a 694-second add.
TEST(TensorGeometry, TheItemsizeMustBeItsDtypes) {
  TensorValue f = tensor(16, {16}, {}, 0, int64_t{1} << 40);
  f.dtype = DType::kFloat32;
  EXPECT_TRUE(says(f, "itemsize 1099511627776 for a float32 tensor, whose elements are 4 bytes"));
  f.itemsize = 4;
  EXPECT_EQ(tensorGeometryProblem(f, true), "");
  TensorValue h = tensor(16, {16}, {}, 0, 4);
  h.dtype = DType::kFloat16;
  EXPECT_TRUE(says(h, "whose elements are 2 bytes"));
  // An unknown dtype (a newer PyTorch's) has no size to hold it to.
  EXPECT_EQ(tensorGeometryProblem(tensor(16, {16}, {}, 0, 3), true), "");
}

}  // namespace
}  // namespace tracetwin::core
