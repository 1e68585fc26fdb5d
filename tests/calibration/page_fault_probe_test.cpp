// The page-fault probe on this host: a fresh mapping's first write costs a
// fault per page (about 1.4 us on the development VM) where a mapped page
// costs a few nanoseconds, so the figure is positive on any Linux.
#include "calibration/page_fault_probe.h"

#include <gtest/gtest.h>

namespace tracetwin::calibration {
namespace {

TEST(PageFaultProbe, AFreshPageCostsMoreThanAMappedOne) {
  const double us = measurePageFaultUs({int64_t{8} << 20, 3});
  EXPECT_GT(us, 0.0);
  EXPECT_LT(us, 1000.0);  // microseconds per 4 KiB page, not per mapping
}

}  // namespace
}  // namespace tracetwin::calibration
