// The CPU side of each op in the critical-path simulation: T1..T5 from the
// overhead table, the between-op terms a calibration fitted beside T1, and
// on a CPU device the unmapping of fresh outputs. Predictor-private.
#pragma once

#include <array>
#include <unordered_map>
#include <vector>

#include "core/graph.h"
#include "predictors/simulation/critical_path.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/op_record.h"
#include "predictors/host/overheads.h"

namespace tracetwin::predictors {

// The between-op terms a calibration fitted beside T1 (between_ops.h): per
// produced tensor, per wrapped number and a share of the op's own time (on a
// CPU its predicted time, on a GPU its host time). Tables without them (a
// Kineto link's) add nothing. Read once per prediction: the lookups and the
// tensor counting cost as much as the rest of an op's CPU side.
struct BetweenOpTerms {
  double per_output_us = 0, per_wrapped_us = 0, share_of_op_time = 0;

  explicit BetweenOpTerms(const OverheadTable& table);
  double us(const core::Node& node, int wrapped_numbers, double op_us) const;
};

// The table's T1..T5 of an op, looked up once per recorded schema
// (perSchema): the tables are maps keyed by op name, and their string
// compares were ~4% of predicting a 100k-op graph. Lives for one prediction.
class OverheadLookup {
 public:
  explicit OverheadLookup(const OverheadTable& table,
                          OverheadStatistic stat = OverheadStatistic::kMedian)
      : table_(table), stat_(stat) {}

  // OverheadTable::us for the op of `r`.
  double us(Overhead which, const OpRecord& r, bool* used_default);
  // The T1 the table keeps for a place in the step (step_positions.h); -1
  // where it has none.
  double positionT1(const char* key) const;

 private:
  struct Entry {
    std::array<double, 5> us{};
    std::array<bool, 5> used_default{};
  };
  const OverheadTable& table_;
  OverheadStatistic stat_;
  std::unordered_map<const core::OpSchema*, Entry> memo_;
  // The last op's entry: an op asks for T1..T5 in turn (a hash lookup each
  // was 3% of predicting a 100k-op step).
  const core::OpSchema* last_schema_ = nullptr;
  Entry last_;
};

// Sets OpRecord::predicted_launches from the model set's launch counts (GPU
// sets) on the ops `idx` of one kernel-launching family, once per distinct
// feature set of `shapes` (distinctOps over `idx`), for the ops it knows.
// A linked trace's recorded kernels take precedence (cpuCosts).
void predictLaunchCounts(std::vector<OpRecord>& recs, const std::vector<size_t>& idx,
                         const DistinctOps& shapes, const ModelSet& models);

// CPU costs of one op. GPU: T1..T5 from the table (defaults when missing,
// counted in `defaults_used`); CPU device: the fitted kernel times include
// dispatch, so only a measured per-op loop cost (T1) is added, and the op's
// memory share (`device`'s bandwidth) is set for co-located ranks. T1 is the
// table's entry for `position` (stepPositionKeys; nullptr: none) where it
// has one.
SimOp cpuCosts(const OpRecord& r, int wrapped_numbers, OverheadLookup& table,
               const BetweenOpTerms& between, bool cpu_device, const DeviceSpec& device,
               int* defaults_used, const char* position = nullptr);

// PredictOptions::host_scale: the CPU-side costs T1..T5 of `s` times `scale`
// (the op's device time, a CPU op's body included, stays).
void scaleHostCosts(double scale, SimOp* s);

}  // namespace tracetwin::predictors
