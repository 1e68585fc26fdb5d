// What writing memory whose lines went cold costs beyond writing it warm,
// per MiB. An op whose output lands on lines the step evicted reads them
// before it writes them (write-allocate); the predictor adds that time to the
// op (predictors/host/step_cache_terms.h). It used to charge those bytes at the
// copy bandwidth, which is not what a CPU pays: on the family-25 EPYC a zero_
// of a cold 12.8 MB buffer took 327 us more than of a warm one where the 25.6
// GB/s copy bandwidth said 500 us, and embbag_wide's weight gradients came
// out 30-140% over their replay.
#pragma once

#include <cstdint>

namespace tracetwin::calibration {

struct ColdWriteProbeOptions {
  // Written cold, then warm: inside the last-level cache (so the warm write
  // stays there) and beyond L2.
  int64_t bytes = int64_t{8} << 20;
  // Streamed through before each cold write: several last-level caches.
  int64_t flush_bytes = int64_t{128} << 20;
  int repeats = 5;
};

// Median over repeats of (cold write - warm write) per MiB, microseconds;
// 0 when the cold write cost nothing more.
double measureColdWriteUsPerMiB(const ColdWriteProbeOptions& options = {});

}  // namespace tracetwin::calibration
