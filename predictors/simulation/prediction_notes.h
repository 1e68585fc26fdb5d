// The notes a prediction carries about how it was made: ops no model was
// fitted on, cross-device scaling, the system's links, recorded kernel
// times, assumed world sizes, host scaling, default CPU overheads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "predictors/simulation/predictor.h"

namespace tracetwin::predictors {

// What preparing the prediction found, beside the options it was asked.
struct PredictionFacts {
  const ModelSet& models;
  const PredictOptions& opts;
  bool cpu_device = false;           // the destination is a CPU
  int64_t recorded_kernels = 0;      // ops timed by a linked Kineto trace
  size_t ops = 0;                    // ops predicted
  int64_t unsized_comms = 0;         // collectives without a recorded group size
  int defaults_used = 0;             // CPU-overhead values that were built-in defaults
};

// Appends the notes to p->notes (p->uncalibrated_ops already filled).
void addPredictionNotes(const PredictionFacts& f, Prediction* p);

}  // namespace tracetwin::predictors
