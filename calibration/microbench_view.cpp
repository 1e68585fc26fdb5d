// Metadata-only microbenchmarks: views (t, view, transpose, reshape, select,
// narrow, expand, unsqueeze, flatten, squeeze, slice) and empty. They launch
// no kernel; their time is the dispatcher's, near-constant in size, but a
// training step records dozens of them (mlp: 15 t + 4 view of 88 viewOps).
#include <fmt/core.h>

#include <functional>

#include "calibration/graph_builder.h"
#include "calibration/microbench.h"
#include "core/aten_schemas.h"

namespace tracetwin::calibration {
namespace {

using core::DType;
using B = GraphBuilder;
using Shape = std::vector<int64_t>;

const std::vector<Shape> kShapes = {{1, 1}, {16, 10}, {128, 64}, {256, 1024}, {4096, 512}};

struct ViewOp {
  const char* label;
  std::function<void(B&, const Shape&, DType)> add;
};

void unaryView(B& b, const char* schema, const Shape& s, const Shape& out, DType dt,
               std::vector<core::Value> args) {
  auto x = b.sharedTensor(s, dt);
  args.insert(args.begin(), x);
  b.op(schema, std::move(args), {b.viewOf(x, out)});
}

const std::vector<ViewOp>& viewOps() {
  static const std::vector<ViewOp> table = {
      {"t",
       [](B& b, const Shape& s, DType dt) {
         unaryView(b, core::schemas::kT, s, {s[1], s[0]}, dt, {});
       }},
      {"transpose",
       [](B& b, const Shape& s, DType dt) {
         unaryView(b, "aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", s,
                   {s[1], s[0]}, dt, {B::intValue(0), B::intValue(1)});
       }},
      {"view",
       [](B& b, const Shape& s, DType dt) {
         unaryView(b, "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)", s, {s[0] * s[1]},
                   dt, {B::intList({s[0] * s[1]})});
       }},
      {"reshape",
       [](B& b, const Shape& s, DType dt) {
         unaryView(b, "aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)", s,
                   {s[0] * s[1], 1}, dt, {B::intList({s[0] * s[1], 1})});
       }},
      {"select",
       [](B& b, const Shape& s, DType dt) {
         unaryView(b, "aten::select.int(Tensor(a) self, int dim, int index) -> Tensor(a)", s,
                   {s[1]}, dt, {B::intValue(0), B::intValue(0)});
       }},
      {"narrow",
       [](B& b, const Shape& s, DType dt) {
         unaryView(b, "aten::narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)",
                   s, {s[0], 1}, dt, {B::intValue(1), B::intValue(0), B::intValue(1)});
       }},
      {"expand",
       [](B& b, const Shape& s, DType dt) {
         auto x = b.sharedTensor({s[1]}, dt);
         b.op("aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
              {x, B::intList(s), B::boolValue(false)}, {b.viewOf(x, s)});
       }},
      {"unsqueeze",
       [](B& b, const Shape& s, DType dt) {
         unaryView(b, "aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", s, {s[0], s[1], 1},
                   dt, {B::intValue(2)});
       }},
      {"flatten",
       [](B& b, const Shape& s, DType dt) {
         unaryView(b,
                   "aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> "
                   "Tensor(a)",
                   s, {s[0] * s[1]}, dt, {B::intValue(0), B::intValue(-1)});
       }},
      {"slice",
       [](B& b, const Shape& s, DType dt) {
         unaryView(b,
                   "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? "
                   "end=None, SymInt step=1) -> Tensor(a)",
                   s, {s[0], s[1]}, dt,
                   {B::intValue(0), B::intValue(0), B::intValue(s[0]), B::intValue(1)});
       }},
      {"empty",
       [](B& b, const Shape& s, DType dt) {
         b.op(
             "aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? "
             "layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? "
             "memory_format=None) -> Tensor",
             {B::intList(s), B::none(), B::none(), b.deviceValue(), B::boolValue(false), B::none()},
             {b.tensor(s, dt)});
       }},
  };
  return table;
}

}  // namespace

std::vector<MicrobenchCase> viewCases(const GridOptions& grid) {
  std::vector<MicrobenchCase> cases;
  for (DType dt : grid.dtypes) {
    for (const ViewOp& op : viewOps()) {
      for (const Shape& s : kShapes) {
        // ~3 us each: repeatedCase gives them the most copies (8).
        cases.push_back(repeatedCase(
            grid, "view", fmt::format("{} [{}x{}] {}", op.label, s[0], s[1], dtypeLabel(dt)),
            kEstOpUs, [=, add = op.add](B& b) { add(b, s, dt); }));
      }
    }
  }
  return cases;
}

}  // namespace tracetwin::calibration
