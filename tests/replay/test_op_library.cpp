// A library of operators the way fbgemm_gpu or a model's extension registers
// them: loaded into a replay with --op-library, its op becomes resolvable
// (tests/replay/op_library_test.cpp). Not linked into any test program.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

at::Tensor scaleBy(const at::Tensor& x, double factor) { return x * factor; }

}  // namespace

TORCH_LIBRARY(tracetwin_test, m) {
  m.def("scale_by(Tensor x, float factor) -> Tensor", &scaleBy);
}
