// T1-T5 of a capture's unprofiled step (core/kineto/overheads.h
// OverheadCollector::addTrace): the host span they are corrected to is the
// recorded host time's (recorded_host_time.h) for the unprofiled step time
// in the capture's meta file beside its ET. Used by `link --overheads-out`
// and `fit`.
#pragma once

#include <string>

#include "core/kineto/kineto_trace.h"
#include "core/kineto/linker.h"

namespace tracetwin::cli {

struct UnprofiledOverheads {
  double host_us = 0;         // the unprofiled host span; 0: no correction
  bool device_bound = false;  // host_us is the longest host span the step allows
  std::string note;           // for the command's output
};

// `et_path`'s meta file (scripts/capture.py) gives the unprofiled step; none: no correction.
UnprofiledOverheads unprofiledOverheads(const std::string& et_path,
                                        const core::kineto::LinkedTimeline& timeline,
                                        const core::kineto::KinetoTrace& trace);

}  // namespace tracetwin::cli
