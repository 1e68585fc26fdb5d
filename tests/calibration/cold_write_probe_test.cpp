// The cold-write probe on this host: writing 4 MiB whose lines a 32 MiB
// stream evicted costs something more than writing them warm, and on the
// scale of DRAM (tens to thousands of microseconds per MiB), not of a
// whole buffer or of nothing at all.
#include "calibration/cold_write_probe.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tracetwin::calibration {
namespace {

TEST(ColdWriteProbe, ACostPerMiBOnTheScaleOfMemory) {
  const double us = measureColdWriteUsPerMiB({int64_t{4} << 20, int64_t{32} << 20, 3});
  EXPECT_TRUE(std::isfinite(us));
  EXPECT_GE(us, 0.0);
  EXPECT_LT(us, 10000.0) << "per MiB: slower than 100 MB/s is not a cache miss";
}

}  // namespace
}  // namespace tracetwin::calibration
