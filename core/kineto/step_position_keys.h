// T1 keys of the gaps whose length is set by where an op sits in the step,
// not by the op: written by the Kineto overhead collector
// (core/kineto/overheads.h) and charged by the predictor
// (predictors/host/step_positions.h) in place of the op's own T1.
//
// In the stored H100 captures (profiled, the profiler's stalls out) these
// gaps are 250-620 us before the first backward op (Python's backward() to
// the autograd engine's first op), 600-2,200 us before the optimizer's first
// op and up to 0.67 ms before the step's first op, against 2-50 us between
// two ops of one thread. Keyed by the op after them, they made that op's
// pooled T1 a mix: _foreach_add_ opens AdamW's step (780-1,880 us) and runs
// inside others' (12-50 us), and sigmoid opens DLRM's backward.
#pragma once

namespace tracetwin::core::kineto {

// The step's first op, from the ProfilerStep's start.
inline constexpr const char* kStepStartKey = "__step_start__";
// An op on a thread that has not run an op of the step yet, after another
// thread's op (the first backward op on the autograd engine's thread).
inline constexpr const char* kThreadEntryKey = "__thread_entry__";
// An op on a thread that ran before, after another thread's op (the
// optimizer's first op, back on the main thread after backward()).
inline constexpr const char* kThreadReturnKey = "__thread_return__";

}  // namespace tracetwin::core::kineto
