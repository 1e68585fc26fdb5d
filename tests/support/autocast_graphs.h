// Hand-built graphs of ops recorded under torch.autocast (core/autocast.h):
// the outer op with the model's arguments, its casts and inner call as
// children, as PyTorch's execution-trace observer writes them.
#pragma once

#include "tests/support/graphs.h"

namespace tracetwin::testing {

inline const char* kLinearSchema =
    "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor";
inline const char* kToDtypeSchema =
    "aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
    "MemoryFormat? memory_format=None) -> Tensor(a)";
inline const char* kMmSchema = "aten::mm(Tensor self, Tensor mat2) -> Tensor";

// c10::ScalarType codes as the trace records them.
inline constexpr int64_t kFloatCode = 6;
inline constexpr int64_t kBFloat16Code = 15;

// A cast child of `parent`: `from` -> `to` (dtype code `code`).
inline core::Node& castChild(GraphBuilder& b, core::NodeId parent, const core::Value& from,
                             const core::Value& to, int64_t code) {
  auto& n = b.op(kToDtypeSchema, {from, intValue(code), boolValue(false), boolValue(false),
                                  noneValue()},
                 {to});
  n.parent = parent;
  return n;
}

inline core::Value bf16(int64_t id, int64_t storage, std::vector<int64_t> shape) {
  return tensorValue(id, storage, std::move(shape), "c10::BFloat16", 2);
}

// Node 3: linear(x fp32 [4,8], W fp32 [16,8], b fp32 [16]) -> y bf16 [4,16]
// under bf16 autocast: casts 4 (b), 5 (W), 6 (x), inner linear 7.
// Node 8: an mm reading y and the bf16 copy of W (as the backward does).
// Node 9: a second linear with the same weight, a cache hit: no casts, its
// inner call 10 reads the copies node 3 made.
inline core::Graph autocastLinearGraph() {
  GraphBuilder b;
  const core::Value x = tensorValue(1, 1, {4, 8});
  const core::Value w = tensorValue(2, 2, {16, 8});
  const core::Value bias = tensorValue(3, 3, {16});
  const core::Value b16 = bf16(4, 4, {16});
  const core::Value w16 = bf16(5, 5, {16, 8});
  const core::Value x16 = bf16(6, 6, {4, 8});
  const core::Value y = bf16(10, 10, {4, 16});
  b.op(kLinearSchema, {x, w, bias}, {y});  // 3
  castChild(b, 3, bias, b16, kBFloat16Code);  // 4
  castChild(b, 3, w, w16, kBFloat16Code);  // 5
  castChild(b, 3, x, x16, kBFloat16Code);  // 6
  b.op(kLinearSchema, {x16, w16, b16}, {y}).parent = 3;  // 7
  const core::Value z = bf16(11, 11, {4, 8});
  b.op(kMmSchema, {y, w16}, {z});  // 8
  const core::Value y2 = bf16(12, 12, {4, 16});
  b.op(kLinearSchema, {z, w, bias}, {y2});  // 9
  b.op(kLinearSchema, {z, w16, b16}, {y2}).parent = 9;  // 10
  return b.build();
}

}  // namespace tracetwin::testing
