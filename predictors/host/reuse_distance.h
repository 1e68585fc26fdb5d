// How far back in the traffic each op's inputs were last touched: the
// reuse distance the last-level cache sees. Calibration's spaced units
// measure memory-bound ops at known distances, and their trees take the
// distance as a column (features.h: OpFeatures::reuse_bytes); the predictor
// hands them the distances of the iteration, from the same function.
//
// The distance counts the bytes that came into the core's private cache
// from beyond it since the input's last touch: what pushes a line down the
// last-level cache. On the development VM's EPYC that cache is a victim
// cache of the L2s: every line the L2 evicts goes in at the top, whether or
// not it was there before, so a tensor re-read from L3 ages the rest as a
// new one does, while a tensor re-read within L2 ages nothing.
// - Counted as distinct bytes (an LRU cache's distance), a CNN's batch norm
//   backward found its saved input ~9 MiB back; it replayed at 246 us, what
//   it took after 24 MiB of other streaming in isolation (99 hot).
// - Counted as every op's tensors, mobilenet_i96's Adam steps (324 KiB
//   moments, re-read within L2 by a dozen ops each) put them hundreds of
//   MiB back, and trees fitted on spaced units priced each mul_ at 40 us
//   against 19 replayed.
#pragma once

#include <vector>

#include "core/graph.h"
#include "predictors/host/step_touches.h"

namespace tracetwin::predictors {

// For ops[i] (one iteration, in issue order; it repeats, so a tensor first
// read late in it was last touched in the previous iteration): the mean over
// its input bytes of each line's distance. A touch brings in the bytes of
// its tensor that an LRU cache of `private_cache_bytes` lost since the
// storage's last touch, judged by every touch's bytes since (all of them
// when it is 0); a line's distance is what
// came in from the op that last touched its storage on, less what that
// touch brought in itself, plus half of the tensor (its lines are touched
// in order). 0 for an op without input tensors.
std::vector<double> inputReuseBytes(const std::vector<const core::Node*>& ops,
                                    double private_cache_bytes);
// The same over touches collected once (stepTouches(ops)). With
// `iteration_brought`, also what one iteration brings in from beyond the
// private caches: the rank's traffic through the last-level cache, which
// co-located ranks share in proportion to it (step_cache_terms.h).
std::vector<double> inputReuseBytes(const StepTouches& step, double private_cache_bytes,
                                    double* iteration_brought = nullptr);

// The distance of an op re-run on its own tensors: its other tensors are all
// that comes between two calls.
double aloneReuseBytes(const core::Node& op, double private_cache_bytes);

}  // namespace tracetwin::predictors
