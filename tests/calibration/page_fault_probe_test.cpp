// The page-fault probe on this host: a fresh mapping's first write costs a
// fault per page (about 1.4 us on the development VM) where a mapped page
// costs a few nanoseconds, and unmapping it a fraction of that (0.25 us),
// so both figures are positive on any Linux.
#include "calibration/page_fault_probe.h"

#include <gtest/gtest.h>

namespace tracetwin::calibration {
namespace {

TEST(PageFaultProbe, AFreshPageCostsMoreThanAMappedOneAndUnmappingItCostsSomething) {
  const PageCosts c = measurePageCosts({int64_t{8} << 20, 3});
  EXPECT_GT(c.fault_us, 0.0);
  EXPECT_LT(c.fault_us, 1000.0);  // microseconds per 4 KiB page, not per mapping
  EXPECT_GT(c.unmap_us, 0.0);
  EXPECT_LT(c.unmap_us, 1000.0);
}

}  // namespace
}  // namespace tracetwin::calibration
