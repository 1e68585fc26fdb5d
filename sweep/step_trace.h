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

// Where an op sits between the step's three synchronising collectives
// (the composed model of sweep/composed_model.h sums each stretch).
enum class StepPhase : uint8_t {
  kBeforeA2A,   // zero_grad, the lookups, the pooled cat
  kDense,       // between the two all_to_alls: the dense forward and backward
  kTables,      // after the gradients' all_to_all: table backward, the bucket
  kAfterReduce  // after the all-reduce: the bucket's copies back, SGD
};
inline constexpr int kCommonOp = -1;       // no table's: the same on every rank
inline constexpr int kPerRankDimsOp = -2;  // the rank's tables together (cat, reshape)

struct OpTag {
  int64_t id = 0;  // node id
  StepPart part = StepPart::kDense;
  StepPhase phase = StepPhase::kBeforeA2A;
  int table = kCommonOp;  // table index, kCommonOp or kPerRankDimsOp
};

// One rank's table-wise step: the trace and a tag per op, in op order.
struct RankStep {
  nlohmann::json trace;
  std::vector<OpTag> tags;
};

// `owner[t]` is the rank that holds table t. Throws UsageError when owner
// does not fit the spec.
RankStep buildRankStep(const SweepSpec& spec, const std::vector<int>& owner, int rank);

// The trace as core::Graph (what the predictor and the replayer take).
core::Graph rankGraph(const RankStep& step, const std::string& source_name);

}  // namespace tracetwin::sweep
