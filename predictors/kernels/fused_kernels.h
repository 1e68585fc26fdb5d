// Inductor's fused Triton kernels (the "triton" op family): memory-bound,
// predicted from the bytes of the tensors they are handed. With no "triton"
// model of their own in a model set (one comes from `tracetwin fit` over
// the Kineto traces of compiled captures), they take the calibrated
// bandwidth curve of elementwise ops: a fused pointwise kernel streams its
// operands once, and so does a fused reduction (one pass over its inputs,
// the reduced values kept in registers), unlike ATen's reduction kernels,
// whose calibrated curve holds their strided, multi-pass shapes. Borrowing
// that curve predicted an H100's compiled resnet18 and transformer steps'
// Triton reductions at 3.6x and 4.3x their Kineto times; the elementwise
// curve gives 1.17x and 1.11x (data/h100/s31/cmp). Only the analytic curve
// is borrowed: the learned residual over ATen op shapes knows nothing of
// fused kernels.
#pragma once

#include <string>

#include "predictors/kernels/kernel_model.h"
#include "predictors/models/model_set.h"

namespace tracetwin::predictors {

// "elementwise" for pointwise, foreach, (persistent) reduction and scan
// kernels; "" for templates (GEMM/conv: compute-bound) and kernels of unknown
// kind.
std::string borrowedFamilyOf(const std::string& kernel_name);

// The calibrated analytic model `kernel_name` borrows from `models`, or
// nullptr (then the device-spec fallback applies). `label` gets
// "borrowed:<family>:<kind>".
const KernelModel* borrowedModel(const ModelSet& models, const std::string& kernel_name,
                                 std::string* label);

}  // namespace tracetwin::predictors
