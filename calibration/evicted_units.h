// The evicted units of a CPU calibration and the pairs they give the
// cold-tensor fit (predictors/host/cold_tensors.h): a small group measured right
// after a stream that evicts every cache, then again on the same tensors,
// hot (kEvictedSuffix in replay_unit.h). Calibration-private.
#pragma once

#include <cstdint>
#include <vector>

#include "calibration/dataset.h"
#include "calibration/replay_unit.h"
#include "predictors/host/cold_tensors.h"

namespace tracetwin::calibration {

// Four times the development VM's 32 MiB L3; a host with a larger one gets
// four of its own (evictBytes).
inline constexpr int64_t kMinEvictBytes = int64_t{128} << 20;
int64_t evictBytes(int64_t last_level_cache_bytes);

// Evicted copy of an interleaved group: the group's first kColdCases cases.
ReplayUnit evictedUnit(const ReplayUnit& group, int64_t flush_bytes);

// A row measured in an evicted unit, either pass.
bool isEvictedRow(const DatasetRow& r);

// Each evicted row with its hot twin (same grid point and op); rows without
// one are left out.
std::vector<predictors::ColdTensorPair> evictedPairs(const std::vector<DatasetRow>& rows);

}  // namespace tracetwin::calibration
