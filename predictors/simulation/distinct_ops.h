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

// Per record, a number for its feature set (what the kernel models read):
// equal numbers, equal features. One pass in order over the records: the
// later passes over one family's ops (distinctOps) jump through 30 MB of
// records of a 100k-op graph, and reading each op's features there missed
// the cache (8-9% of its prediction).
std::vector<uint32_t> featureIds(const std::vector<OpRecord>& recs);

// The distinct feature sets among `idx` (ops of one family); `ids`:
// featureIds(recs).
DistinctOps distinctOps(const std::vector<OpRecord>& recs, const std::vector<size_t>& idx,
                        const std::vector<uint32_t>& ids);

// Predicts the ops of `d` with `model`, once per distinct feature set.
std::vector<double> predictDistinct(const KernelModel& model, const DeviceSpec& spec,
                                    const DistinctOps& d);

}  // namespace tracetwin::predictors
