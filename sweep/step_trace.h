// The training step one plan stands for (docs/sweeps.md, "The step"), one
// execution trace per rank: the ops, shapes and collectives a PyTorch 1.13
// capture of scripts/workloads/dlrm_sweep.py records for the same file and
// plan (checked op by op in tests/sweep), so the predictor and the replayer
// take them unchanged.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/graph.h"
#include "sweep/sweep_spec.h"

namespace tracetwin::sweep {

// What each op of a rank's step belongs to, for the per-rank split of a
// prediction into embedding, dense and communication.
enum class StepPart : uint8_t { kEmbedding, kDense, kComm };

// One rank's table-wise step: the trace and, by node id, each op's part and
// (embedding ops) its table (-1 otherwise).
struct RankStep {
  nlohmann::json trace;
  std::vector<std::pair<int64_t, StepPart>> parts;  // (node id, part), in op order
  std::vector<std::pair<int64_t, int>> table_of_op;  // embedding ops: (node id, table index)
};

// `owner[t]` is the rank that holds table t. Throws UsageError when owner
// does not fit the spec.
RankStep buildRankStep(const SweepSpec& spec, const std::vector<int>& owner, int rank);

// The trace as core::Graph (what the predictor and the replayer take).
core::Graph rankGraph(const RankStep& step, const std::string& source_name);

}  // namespace tracetwin::sweep
