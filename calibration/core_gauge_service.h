// The core speed gauge (core_speed_gauge.h) served over a line protocol, for
// a measurement that another process drives: scripts/sweep-pytorch.py gates
// its PyTorch rounds on the same gauge that `sweep --measure
// --core-tolerance` gates the replays' rounds on (`tracetwin host
// --serve-core-gauge`). One gauge lives as long as the service, so every
// reading is judged against the fast phase of the whole run; a fresh
// process per request would judge it against its own few warm-up readings,
// and on a host in a slow phase call that phase fast.
//
// Requests, one per line (empty lines are skipped):
//   wait TOLERANCE MAX_WAIT_S   every core within TOLERANCE of the fast
//                               phase, or MAX_WAIT_S seconds of sleeping
//   read                        every core once
// Each is answered with one JSON line, flushed:
//   {"cpus":[0,1],"slowdowns":[1.01,1.04],"slowest":1.04,"waited_s":0.0}
// (waited_s: the sleeping this request did). The service ends with its input.
#pragma once

#include <istream>
#include <ostream>

#include "calibration/core_speed_gauge.h"

namespace tracetwin::calibration {

// Answers `requests` on `replies` until the end of `requests`. Throws
// InputError naming the line for a request it does not know, before
// answering it; what the gauge throws leaves as it is.
void serveCoreGauge(CoreSpeedGauge& gauge, std::istream& requests, std::ostream& replies);

}  // namespace tracetwin::calibration
