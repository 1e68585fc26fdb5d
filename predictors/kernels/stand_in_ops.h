// Ops made up to stand for what one recorded op runs inside (ATen's RNN
// steps, the GEMMs of a fused attention kernel), so that the calibrated
// families can predict a recorded op no model covers. They are not trace
// nodes: no id, no parent, tensors with shapes, dtypes and devices only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.h"

namespace tracetwin::predictors {

// One stand-in op and how many times it runs.
struct StandInOp {
  core::Node node;
  double count = 1;
};

core::Node standInNode(std::string name, std::vector<core::Value> inputs,
                       std::vector<core::Value> outputs);

// A tensor argument of `shape` (contiguous unless `strides` are given) with
// the dtype, itemsize and device of `like`.
core::Value standInTensor(const core::TensorValue& like, std::vector<int64_t> shape,
                          std::vector<int64_t> strides = {});

}  // namespace tracetwin::predictors
