// An iteration's ops repeat a few hundred distinct shapes: the kernel models
// predict each distinct feature set once (DistinctOps, op_record.h).
#pragma once

#include <cstdint>
#include <vector>

#include "predictors/kernels/kernel_model.h"
#include "predictors/simulation/op_record.h"
#include "predictors/specs/device_spec.h"

namespace tracetwin::predictors {

// What the op does, whatever came before it: name, dtype, sizes and the
// family's shape features (OpRecord::shape_hash).
uint64_t shapeHash(const OpFeatures& f);

// The distinct feature sets among `idx` (ops of one family).
DistinctOps distinctOps(const std::vector<OpRecord>& recs, const std::vector<size_t>& idx);

// Predicts the ops of `d` with `model`, once per distinct feature set.
std::vector<double> predictDistinct(const KernelModel& model, const DeviceSpec& spec,
                                    const DistinctOps& d);

}  // namespace tracetwin::predictors
