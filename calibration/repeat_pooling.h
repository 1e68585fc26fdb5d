// How the repeated measurements of one grid point become its one sample.
//
// A shared host only ever slows an op down: another tenant on the core's
// sibling thread, a page-cache flush, a migration. The measurements of one
// point, taken a pass apart, are its cost plus whatever the host added at the
// time. The median keeps a typical figure and needs three repeats to shed one
// slow phase; the fastest keeps the one least disturbed, which on this
// project's VM (fast about 15% of the time, 1.5-3x slower phases lasting 0.1 s
// to seconds) is what a quiet host measures (docs/calibration.md).
#pragma once

#include <string>
#include <vector>

namespace tracetwin::calibration {

enum class RepeatPooling { kMedian, kFastest };

// The pooled time of `us` (not empty).
double pooledUs(const std::vector<double>& us, RepeatPooling pooling);

// "median" or "fastest", as the `--pool` option spells them.
std::string poolingName(RepeatPooling pooling);

}  // namespace tracetwin::calibration
