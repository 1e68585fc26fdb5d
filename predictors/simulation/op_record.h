// One op of a prediction while predictGraph works on it: the trace node, its
// features and the prediction as it builds up. Predictor-private: shared by
// predictor.cpp and the passes of step_cache_terms.h.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/graph.h"
#include "predictors/kernels/features.h"
#include "predictors/simulation/op_timing.h"
#include "predictors/simulation/predictor.h"

namespace tracetwin::predictors {

struct OpRecord {
  const core::Node* node;
  OpFeatures f;
  // The op's entry in the prediction's per-op list, built up in place. A
  // copy here, moved out at the end, made each record 496 bytes instead of
  // 312 and a 100k-op prediction fault in 18 MB more (page faults were
  // 11-15% of its time).
  OpPrediction& out;
  bool fallback = false;
  bool uncalibrated = false;       // op not among ModelSet::calibrated_ops: analytic base
  uint64_t shape_hash = 0;         // shapeHash(f), once per op
  double cold_output_bytes = 0;    // ColdBytes::outputs
  double cold_input_tensors = 0;   // ColdBytes::input_tensors
  double fresh_output_bytes = 0;   // FreshBytes::outputs, where page faults are charged
  int64_t recorded_launches = -1;  // kernels of the op in a linked trace; -1 unknown
  int predicted_launches = -1;     // ModelSet::launch_counts' count; -1 none
  OpDependencies deps = {};        // CommDependencies::observe, in the first pass
};

// The distinct feature sets among some ops of one family, and each op's
// index into them: models predict each set once.
struct DistinctOps {
  std::vector<const OpFeatures*> features;
  std::vector<size_t> slot;  // per op, an index into `features`
};

// `compute()` once per recorded schema (every op of a schema has its name),
// kept in `memo` for the ops after it; every time for a node without one.
// Per-op lookups by name (map and substring searches) are a large part of
// predicting a 100k-op graph. `memo` lives no longer than the graph.
// Keyed by the schema itself (null: no memo), for callers that hold the
// schemas apart from the nodes; the Node form below reads it from the node.
template <typename T, typename Compute>
T perSchema(std::unordered_map<const core::OpSchema*, T>& memo, const core::OpSchema* schema,
            Compute compute) {
  if (schema == nullptr) return compute();
  auto it = memo.find(schema);
  if (it == memo.end()) it = memo.emplace(schema, compute()).first;
  return it->second;
}
template <typename T, typename Compute>
T perSchema(std::unordered_map<const core::OpSchema*, T>& memo, const core::Node& node,
            Compute compute) {
  return perSchema(memo, node.schema.get(), compute);
}

}  // namespace tracetwin::predictors
