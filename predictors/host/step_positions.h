// The gaps set by an op's place in the step rather than by the op: the
// step's first op, the first op of a thread joining the step (backward's
// first op on the autograd thread) and an op back on a thread after another
// thread ran (the optimizer after backward()). A Kineto-measured table keys
// their T1 apart (core/kineto/step_position_keys.h); the predictor charges
// that entry in place of the op's own T1 where the table has it.
#pragma once

#include <vector>

#include "predictors/simulation/op_record.h"

namespace tracetwin::predictors {

// Per op of `recs` (issue order): the T1 key of its place in the step, or
// nullptr for an op that follows an op of its own thread.
std::vector<const char*> stepPositionKeys(const std::vector<OpRecord>& recs);

}  // namespace tracetwin::predictors
