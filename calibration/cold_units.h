// The cold units of a CPU calibration and the pairs they give the
// code-cold fit (predictors/host/code_cold.h): a small group measured again with
// a compute-bound spacer before every copy, and each of its rows matched
// with the same grid point's interleaved row. Calibration-private.
#pragma once

#include <cstdint>
#include <vector>

#include "calibration/dataset.h"
#include "calibration/replay_unit.h"
#include "predictors/host/code_cold.h"

namespace tracetwin::calibration {

// Cold copy of an interleaved group (see kBusySpacerSizes): same cases, one
// round, an mm of spacer_n before each copy (and the tiny copy_ spacer after
// it when `rewarm`).
ReplayUnit coldUnit(const ReplayUnit& group, int64_t spacer_n, bool rewarm);

// A row measured in a cold unit (its label carries kColdSuffix).
bool isColdRow(const DatasetRow& r);

// Each cold row with the interleaved row of its grid point and op; cold rows
// without one are left out.
std::vector<predictors::CodeColdPair> coldPairs(const std::vector<DatasetRow>& rows);

}  // namespace tracetwin::calibration
