// Data-movement microbenchmarks: copy_, clone, cat and stack of several
// tensors, transpose followed by contiguous (the copy it forces), item (a
// device-to-host read of one element), over sizes, and advanced indexing
// (index.Tensor and the accumulating _index_put_impl_ autograd runs for it,
// as DLRM's pairwise-interaction gather records them).
#include <fmt/core.h>

#include <algorithm>
#include <functional>

#include "calibration/graph_builder.h"
#include "calibration/microbench.h"

namespace tracetwin::calibration {
namespace {

using core::DType;
using B = GraphBuilder;
using Shape = std::vector<int64_t>;

const std::vector<int64_t> kCopyNumel = {1, 100, 1000, 4096, 16384, 65536, 262144, 1048576, 4194304};
// Past a GPU's L2, as in microbench_elementwise.cpp.
const std::vector<int64_t> kCopyAcceleratorNumel = {16777216, 67108864};
const std::vector<int64_t> kPieces = {2, 4, 9};
// Advanced indexing: x[:, li, lj] on [batch, n, n] with the n(n-1)/2 index
// pairs of a lower triangle.
const std::vector<int64_t> kIndexBatch = {1, 16, 128, 1024};
const std::vector<int64_t> kIndexSide = {4, 9, 27};
constexpr const char* kIndex = "aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor";
constexpr const char* kIndexPut =
    "aten::_index_put_impl_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool "
    "accumulate=False, bool unsafe=False) -> Tensor(a!)";

struct CopyOp {
  const char* label;
  double passes;  // bytes moved / tensor bytes
  std::function<void(B&, int64_t numel, DType)> add;
};

const std::vector<CopyOp>& copyOps() {
  static const std::vector<CopyOp> table = {
      {"copy_", 2,
       [](B& b, int64_t n, DType dt) {
         const Shape s = matrixShape(n);
         auto dst = b.tensor(s, dt);
         b.op("aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
              {dst, b.tensor(s, dt), B::boolValue(false)}, {dst});
       }},
      {"clone", 2,
       [](B& b, int64_t n, DType dt) {
         const Shape s = matrixShape(n);
         b.op("aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor",
              {b.tensor(s, dt), B::none()}, {b.tensor(s, dt)});
       }},
      {"transpose+contiguous", 2,
       [](B& b, int64_t n, DType dt) {
         const Shape s = matrixShape(n);
         auto x = b.tensor(s, dt);
         auto xt = b.viewOf(x, {s[1], s[0]});
         b.op("aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
              {x, B::intValue(0), B::intValue(1)}, {xt});
         b.op("aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)",
              {xt, B::intValue(0)}, {b.tensor({s[1], s[0]}, dt)});
       }},
      {"item", 0,
       [](B& b, int64_t, DType dt) {
         b.op("aten::item(Tensor self) -> Scalar", {b.tensor({}, dt)}, {B::doubleValue(0)});
       }},
  };
  return table;
}

// autocast's casts: aten::to.dtype from `from` to `to`, as the ET of an
// autocast step records them around every GEMM and convolution (mlp_bf16:
// 9 of its 97 ops, 0.78 ms of a 13 ms replayed step).
void addCast(B& b, int64_t numel, DType from, DType to) {
  const Shape s = matrixShape(numel);
  b.op(
      "aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool "
      "copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
      {b.tensor(s, from), B::intValue(scalarTypeCode(to)), B::boolValue(false), B::boolValue(false),
       B::none()},
      {b.tensor(s, to)});
}

// cat/stack of `pieces` [rows, cols] tensors along dim 1 (DLRM's feature
// concat) or dim 0.
void addConcat(B& b, bool stack, int64_t pieces, int64_t numel, int64_t dim, DType dt) {
  const Shape s = matrixShape(std::max<int64_t>(1, numel / pieces));
  std::vector<core::Value> parts;
  for (int64_t p = 0; p < pieces; ++p) parts.push_back(b.tensor(s, dt));
  Shape out = s;
  if (stack) {
    out.insert(out.begin() + dim, pieces);
  } else {
    out[static_cast<size_t>(dim)] *= pieces;
  }
  b.op(stack ? "aten::stack(Tensor[] tensors, int dim=0) -> Tensor"
             : "aten::cat(Tensor[] tensors, int dim=0) -> Tensor",
       {B::tensorList(parts), B::intValue(dim)}, {b.tensor(out, dt)});
}

// x[:, li, lj] and its backward's accumulate into the [batch, n, n] gradient.
void addIndexPair(B& b, int64_t batch, int64_t side, DType dt) {
  const int64_t pairs = side * (side - 1) / 2;
  auto self = b.tensor({batch, side, side}, dt);
  auto indices = [&] {
    return B::tensorList(
        {b.undefinedTensor(), b.tensor({pairs}, DType::kInt64), b.tensor({pairs}, DType::kInt64)});
  };
  b.op(kIndex, {self, indices()}, {b.tensor({batch, pairs}, dt)});
  auto grad = b.tensor({batch, side, side}, dt);
  b.op(kIndexPut,
       {grad, indices(), b.tensor({batch, pairs}, dt), B::boolValue(true), B::boolValue(true)},
       {grad});
}

MicrobenchCase copyCase(const GridOptions& grid, const std::string& label, double bytes,
                        std::function<void(B&)> add) {
  return repeatedCase(grid, "copy", label, estimateOpUs(0, 1, bytes), std::move(add));
}

}  // namespace

std::vector<MicrobenchCase> copyCases(const GridOptions& grid) {
  std::vector<MicrobenchCase> cases;
  for (DType dt : grid.dtypes) {
    const double item = static_cast<double>(core::dtypeItemsize(dt));
    if (dt == DType::kFloat16 || dt == DType::kBFloat16) {
      for (int64_t n : withAccelerator(kCopyNumel, kCopyAcceleratorNumel, grid.accelerator)) {
        for (const bool down : {true, false}) {  // float32 -> dt, dt -> float32
          const DType from = down ? DType::kFloat32 : dt, to = down ? dt : DType::kFloat32;
          cases.push_back(
              copyCase(grid, fmt::format("to {}->{} numel={}", dtypeLabel(from), dtypeLabel(to), n),
                       n * (item + 4.0), [=](B& b) { addCast(b, n, from, to); }));
        }
      }
    }
    for (const CopyOp& op : copyOps()) {
      for (int64_t n : withAccelerator(kCopyNumel, kCopyAcceleratorNumel, grid.accelerator)) {
        if (op.passes == 0 && n > 1) continue;  // item reads one element
        cases.push_back(copyCase(grid, fmt::format("{} numel={} {}", op.label, n, dtypeLabel(dt)),
                                 op.passes * n * item, [=, add = op.add](B& b) { add(b, n, dt); }));
      }
    }
    for (bool stack : {false, true}) {
      for (int64_t pieces : kPieces) {
        for (int64_t n : kCopyNumel) {
          if (n < pieces) continue;
          for (int64_t dim : {0, 1}) {
            cases.push_back(
                copyCase(grid,
                         fmt::format("{} pieces={} numel={} dim={} {}", stack ? "stack" : "cat",
                                     pieces, n, dim, dtypeLabel(dt)),
                         2.0 * n * item, [=](B& b) { addConcat(b, stack, pieces, n, dim, dt); }));
          }
        }
      }
    }
    for (int64_t batch : kIndexBatch) {
      for (int64_t side : kIndexSide) {
        const double bytes = (batch * side * side + 2.0 * batch * side * (side - 1) / 2) * item;
        cases.push_back(copyCase(
            grid, fmt::format("index+index_put_ [{}x{}x{}] {}", batch, side, side, dtypeLabel(dt)),
            bytes, [=](B& b) { addIndexPair(b, batch, side, dt); }));
      }
    }
  }
  return cases;
}

}  // namespace tracetwin::calibration
