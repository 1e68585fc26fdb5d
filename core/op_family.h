// Op families: the unit of kernel models, calibration grids and the per-family
// rows of `compare`. One table (op_family.cpp) shared by replay and prediction.
#pragma once

#include <string>

#include "core/graph.h"

namespace tracetwin::core {

// "gemm", "conv", "embedding_bag", "elementwise", "reduction", "norm",
// "softmax", "copy", "view", "comm", "triton", "other".
// Keyed by the op name without overload ("aten::addmm"); backward ops
// ("aten::convolution_backward") map to their forward family.
std::string opFamily(const Node& node);
std::string opFamilyOfName(const std::string& op_name);

}  // namespace tracetwin::core
