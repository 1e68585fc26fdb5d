// Views from the sources that need no LibTorch: the original run (an ET
// linked to its Kineto trace) and a prediction (its critical-path
// schedule). The replay's view is built in cli/timeline_replay.h.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/graph.h"
#include "core/kineto/linker.h"
#include "predictors/simulation/joint_prediction.h"
#include "predictors/simulation/predictor.h"
#include "timeline/timeline.h"

namespace tracetwin::timeline {

// The original iteration: each linked top-level op on its Kineto thread, its
// kernels, memcpys and memsets on their streams (and kernels that ET labels
// launched), from the iteration's start. `kineto` names the trace.
View originalView(const core::Graph& graph, const core::kineto::LinkedTimeline& linked,
                  const std::string& kineto, int rank = -1);

// What an op measured in a replay, for the prediction's error on each slice.
struct Measured {
  double us = 0;  // device time on a device, else the op's time
};

// The prediction's simulated iteration (PredictOptions::keep_schedule): ops
// on their CPU threads with the model that timed them, kernels on their
// streams, and the waits - a CPU blocked on its stream, a kernel held back by
// another stream or by the other ranks - as slices of their own. With
// `measured`, each op's error against it (error_pct).
View predictionView(const predictors::Prediction& prediction,
                    const std::unordered_map<core::NodeId, Measured>* measured = nullptr,
                    int rank = -1);

// Several ranks predicted together (MultiRankOptions::keep_schedule): per
// rank its `originals[r]` when given, then its prediction, on the clock the
// ranks share; each collective linked across its members (CollectiveLink).
Timeline ranksTimeline(const predictors::MultiRankPrediction& m,
                       std::vector<std::optional<View>> originals = {});

}  // namespace tracetwin::timeline
