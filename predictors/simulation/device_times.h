// Device time of every op: per family (and precision), the family's model
// on each distinct feature set, the analytic base for ops the models never
// saw, Triton kernels by the family whose work they do, unmodelled ops as
// the sum of their children or of ATen's RNN steps; scaled to the target
// device. Internal to predictors/simulation (the predictor and its casts).
#pragma once

#include <vector>

#include "core/graph.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/op_record.h"
#include "predictors/simulation/predictor.h"

namespace tracetwin::predictors {

// Fills each record's out.predicted_us and out.model, and its fallback and
// uncalibrated flags.
void predictDeviceTimes(std::vector<OpRecord>& recs, const core::Graph& graph,
                        const ModelSet& models, const PredictOptions& opts);

}  // namespace tracetwin::predictors
