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
  int shard = -1;         // index into planShards() when the op is one shard's
};

// One rank's piece of one table (docs/sweeps.md, "Sharding"). Table-wise:
// the whole table. Row-wise over K ranks: rows split evenly (the first
// rows % K shards one more), each looks up the global batch's indices that
// fall in its rows (their expected count: uniform or Zipf). Column-wise:
// dim split evenly the same way, every row, every index. Data-parallel: the
// whole table on every rank, its own batch_size bags only.
struct Shard {
  int table = 0;
  Sharding kind = Sharding::kTableWise;
  int rank = 0;
  int index = 0;  // among its table's shards
  int64_t row_begin = 0, rows = 0;
  int64_t col_begin = 0, dim = 0;
  int64_t bags = 0;     // world_size x batch_size; batch_size when data-parallel
  int64_t lookups = 0;  // indices it looks up per step
};
// Every shard of a plan, by table, then shard index. Throws UsageError when
// the placements do not fit the spec.
std::vector<Shard> planShards(const SweepSpec& spec, const std::vector<Placement>& place);
// The share of a table's lookups that fall in rows [0, x): x / rows, or the
// Zipf CDF.
double rowsShare(const TableSpec& table, int64_t x);

// One rank's table-wise step: the trace and a tag per op, in op order.
struct RankStep {
  nlohmann::json trace;
  std::vector<OpTag> tags;
};

// `owner[t]` is the rank that holds table t. Throws UsageError when owner
// does not fit the spec.
RankStep buildRankStep(const SweepSpec& spec, const std::vector<int>& owner, int rank);
// Any plan: every table's placement.
RankStep buildRankStep(const SweepSpec& spec, const std::vector<Placement>& place, int rank);

// The trace as core::Graph (what the predictor and the replayer take).
core::Graph rankGraph(const RankStep& step, const std::string& source_name);

}  // namespace tracetwin::sweep
