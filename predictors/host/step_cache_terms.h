// What a CPU op costs in a training step on top of its kernel model's time,
// which calibration measured with the op's code and data cache-hot (repeated
// calls of one grid point): data that went cold since its last use (the
// traffic walk of cache_reuse.h) and code that went cold since the op's
// last call (code_cold.h). Predictor-private passes over one iteration's ops,
// run in this order by predictGraph.
#pragma once

#include <vector>

#include "predictors/models/model_set.h"
#include "predictors/simulation/op_record.h"
#include "predictors/simulation/predictor.h"
#include "predictors/host/step_touches.h"

namespace tracetwin::predictors {

// Whether markColdInputs walks the step's touches for these models (a cache
// size for cold inputs, or trees that read reuse distances). predictGraph
// then collects them as it computes the ops' features (StepTouchesBuilder).
bool needsStepTouches(const ModelSet& models);

// Sets OpFeatures::cold_bytes (read by the bandwidth-curve DRAM floor), the
// inputs' reuse distances and the cold output bytes of every op; before the
// kernel models run. `step`: the touches of `recs`' nodes, when
// needsStepTouches (empty otherwise).
//
// `llc_share` (PredictOptions::llc_share): the part of the last-level cache
// the rank's data holds while ranks co-located with it stream theirs through
// the same cache (1: alone). An LRU cache shared by streams keeps each one's
// lines in proportion to its insertions, so a tensor survives share x the
// capacity of other traffic: cold inputs are judged against share x the
// cache, and the trees' reuse distances (learned alone) are read as
// distance / share. `llc_traffic`, where given, gets the iteration's traffic
// through the last-level cache (bytes brought into the private caches,
// reuse_distance.h), which gives co-located ranks their shares; 0 when the
// models walk no touches.
void markColdInputs(std::vector<OpRecord>& recs, const ModelSet& models, const StepTouches& step,
                    double llc_share = 1.0, double* llc_traffic = nullptr);

// After the kernel models, in this order: each adds its share to
// OpPrediction::predicted_us and records it in its own field (cold_tensor_us;
// code_cold_us; cold_output_us and cold_input_us; page_fault_us). None applies across
// devices (PredictOptions::target).
void addColdTensorPenalties(std::vector<OpRecord>& recs, const ModelSet& models,
                            const PredictOptions& opts);
void addCodeColdPenalties(std::vector<OpRecord>& recs, const ModelSet& models,
                          const PredictOptions& opts);
void addColdDramReads(std::vector<OpRecord>& recs, const ModelSet& models,
                      const PredictOptions& opts);
// Outputs mapped fresh for every call (fresh_pages.h) fault in each page at
// the device's measured page_fault_us (page_fault_us; with the unmapping of
// the op's own buffers); sets OpRecord::fresh_output_bytes, whose unmapping
// the CPU side charges between ops. With `sparse`, the sparse tensors' arrays
// an op allocates count too (freshSparseBytes).
void addFreshPageFaults(std::vector<OpRecord>& recs, const ModelSet& models,
                        const PredictOptions& opts, const core::SparseTensors* sparse = nullptr);

}  // namespace tracetwin::predictors
