// Inductor's fused Triton kernels (the "triton" op family): memory-bound,
// predicted from the bytes of the tensors they are handed. With no "triton"
// model of their own in a model set (one comes from `tracetwin fit` over
// the Kineto traces of compiled captures), they take the calibrated
// bandwidth curve of the memory-bound family they do the work of: a fused
// pointwise kernel streams its operands like an elementwise op, a fused
// reduction like a reduction. Only the analytic curve is borrowed: the
// learned residual over ATen op shapes knows nothing of fused kernels.
#pragma once

#include <string>

#include "predictors/kernels/kernel_model.h"
#include "predictors/models/model_set.h"

namespace tracetwin::predictors {

// "elementwise" for pointwise and foreach kernels, "reduction" for (persistent)
// reductions and scans, "" for templates (GEMM/conv: compute-bound) and
// kernels of unknown kind.
std::string borrowedFamilyOf(const std::string& kernel_name);

// The calibrated analytic model `kernel_name` borrows from `models`, or
// nullptr (then the device-spec fallback applies). `label` gets
// "borrowed:<family>:<kind>".
const KernelModel* borrowedModel(const ModelSet& models, const std::string& kernel_name,
                                 std::string* label);

}  // namespace tracetwin::predictors
