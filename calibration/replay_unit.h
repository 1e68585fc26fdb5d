// Replaying one unit of a calibration sweep (one grid point on its own, or
// a group of small ones interleaved) and turning its per-op medians into
// dataset rows and a between-op sample. Calibration-private.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "calibration/calibrator.h"
#include "calibration/dataset.h"
#include "calibration/microbench.h"
#include "predictors/host/between_ops.h"

namespace tracetwin::calibration {

struct CaseOutcome {
  std::vector<DatasetRow> rows;
  std::string failure;                                  // empty when every op ran
  std::optional<predictors::BetweenOpsSample> between;  // replays that ran whole
};

// Small ops run 1.5-3x slower inside a real step than back to back with
// copies of themselves: the dispatcher and kernel code they need was evicted
// from the instruction caches and branch predictors by the ops between. So
// cases whose one copy is short run interleaved: kGroupCases cases of the
// family per graph, one copy of each per round in a shuffled order, kRounds
// rounds; each op follows a different op, as in a step.
inline constexpr double kInterleaveMaxUs = 80;
inline constexpr size_t kGroupCases = 12;
inline constexpr int kRounds = 3;

// Cold units (CPU): the first kColdGroups groups of each family run once
// more per spacer size in kBusySpacerSizes, one round, each copy after an
// mm of that size (~1 ms and ~12 ms on the development host), right after
// the same group interleaved; the difference is the code-cold penalty
// (predictors/host/code_cold.h). A cold unit takes the group's first kColdCases
// cases. Each size runs twice: the copy right after the
// mm, and after a tiny copy_ that re-warms what every op shares.
inline constexpr int kColdGroups = 1;
inline constexpr size_t kColdCases = 6;  // of the group's 12: ~0.1 s per iteration with mm 320
inline constexpr int64_t kBusySpacerSizes[] = {128, 320};
inline constexpr const char* kColdSuffix = " [cold]";

// Evicted units (CPU): the first kColdGroups groups of each family run once
// more, each round after a stream of flush_bytes that evicts every cache
// (GraphBuilder::flush): per case kEvictedCopies copies on their own tensors,
// then the same ops on the same tensors again, now hot; as in an optimizer's
// loop, only the first copy finds its code cold. Rows "<label> [evicted]" and
// "<label> [evicted, hot]"; the difference is what the inputs' going cold
// costs (predictors/host/cold_tensors.h).
inline constexpr int kEvictedCopies = 5;
inline constexpr const char* kEvictedSuffix = " [evicted]";
inline constexpr const char* kEvictedHotSuffix = " [evicted, hot]";

// Spaced units (CPU, memory-bound families): a few cases of the family whose
// inputs are too large for L2 run again per distance in kSpacedMiB: per round
// and case, one copy on its own tensors (not recorded), a stream of that
// many bytes (GraphBuilder::flush), and the copy's ops once more on the same
// tensors, now that far back in the traffic. A step reads its saved
// activations and parameters at such distances, where a microbenchmark
// re-running one op never does; on the development VM the last-level cache
// loses a tensor gradually from ~8 MiB of other traffic on, not at one
// capacity (ResNet-style batch norm backward, 1 MiB tensors: 91 us at once,
// 199 after 16 MiB, 263 after 24, 296 after 48, 380 after 128). Rows
// "<label> [spaced N MiB]", marked spaced with the inputs' reuse distance in
// the unit: the trees learn it as a column (predictors/kernels/features.h).
inline constexpr int64_t kSpacedMiB[] = {8, 16, 24, 32, 48, 64, 128};
inline constexpr size_t kSpacedCases = 6;
// Input bytes of the cases taken: past L2, within what one round can stream.
inline constexpr double kSpacedMinInputBytes = 256.0 * 1024;
inline constexpr double kSpacedMaxInputBytes = 16.0 * 1024 * 1024;
inline constexpr const char* kSpacedSuffix = " [spaced ";

// What one replay measures: one case on its own or a group interleaved.
struct ReplayUnit {
  std::vector<MicrobenchCase> cases;
  double est_us = 0;        // one iteration
  int64_t busy_spacer = 0;  // > 0: a cold unit, an mm of this size before every copy
  bool rewarm = false;      // cold unit: a tiny copy_ between the mm and each copy
  int64_t flush_bytes = 0;  // > 0: an evicted unit, this stream before every round
  int64_t spaced_bytes = 0;  // > 0: a spaced unit, this stream before every measured copy
};

bool interleavable(const MicrobenchCase& c);

// How the unit's replay refills its inputs between measured iterations: the
// options' override, else what its cases ask (MicrobenchCase::refill; a
// unit holds one family's cases, which ask alike).
UnitRefill unitRefillOf(const ReplayUnit& u, const CalibrationOptions& o);

// Measured iterations for a unit whose one iteration is estimated at est_us.
int itersFor(double est_us);

// Replays the unit (replay::replayGraph) and pools identical copies' medians.
CaseOutcome runCase(const ReplayUnit& u, const CalibrationOptions& o,
                    const std::string& device_name);

}  // namespace tracetwin::calibration
