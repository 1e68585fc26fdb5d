// The spaced units of a CPU calibration (kSpacedMiB in replay_unit.h): cases
// of a memory-bound family re-run at reuse distances a step has and a
// microbenchmark does not. Calibration-private.
#pragma once

#include <vector>

#include "calibration/microbench.h"
#include "calibration/replay_unit.h"

namespace tracetwin::calibration {

// Whether the family's ops are bound by memory traffic, so that how long ago
// their inputs were touched shows in their time.
bool spacedFamily(const std::string& family);

// What one copy of a case reads and how it writes: the bytes of the
// distinct input tensors of the ops of its family, and whether every one of
// those ops writes into an input (add_, an optimizer's updates) rather than a
// new tensor. 0 bytes for a case that has no copy.
struct CaseTraffic {
  double input_bytes = 0;
  bool in_place = false;
};
CaseTraffic caseTraffic(const MicrobenchCase& c);

// Of `cases` with input bytes in [kSpacedMinInputBytes, kSpacedMaxInputBytes],
// up to kSpacedCases that write in place and up to kSpacedCases that write a
// new tensor, each set spread over that range from smallest to largest, each
// case as one unit per distance in kSpacedMiB. Both kinds: an op writing a
// new tensor also finds that tensor's memory cold after the stream (the
// allocator hands back the block of the copy before it), which an optimizer's
// in-place update does not; trees fitted on the one kind alone carried it to
// the other (324 KiB Adam moments, mul_ in place: 42 us predicted, 19
// replayed).
std::vector<ReplayUnit> spacedUnits(const std::vector<MicrobenchCase>& cases);

}  // namespace tracetwin::calibration
