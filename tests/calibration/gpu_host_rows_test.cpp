// Which rows of a calibration feed the host side of a GPU model set
// (calibration/gpu_host_rows.h): host times from this host's GPU rows,
// kernel counts from every GPU row but the cold and evicted ones.
#include "calibration/gpu_host_rows.h"

#include <gtest/gtest.h>

#include "calibration/microbench.h"
#include "calibration/replay_unit.h"
#include "core/graph.h"

namespace tracetwin::calibration {
namespace {

DatasetRow copyRow(double host_us, int kernels, const std::string& suffix = "") {
  const MicrobenchCase c = microbenchFamily("copy").cases(GridOptions{}).front();
  const core::Graph g = c.build();
  DatasetRow r;
  r.case_label = c.label + suffix;
  r.sample.node = g.node(core::selectTopLevelOps(g).ops.front());
  r.sample.measured_us = 3.0;
  r.host_us = host_us;
  r.kernels = kernels;
  return r;
}

TEST(GpuHostRows, HostTimesComeFromRowsThatHaveThem) {
  const std::vector<DatasetRow> rows = {copyRow(8.0, 1), copyRow(0.0, 2), copyRow(0.0, -1)};
  const std::vector<predictors::HostCostSample> s = hostCostSamples(rows);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_DOUBLE_EQ(s[0].host_us, 8.0);
  EXPECT_EQ(s[0].kernels, 1);
}

TEST(GpuHostRows, KernelCountsComeFromPooledRowsButNotColdOrCpuOnes) {
  const std::vector<DatasetRow> rows = {
      copyRow(8.0, 1),               // this host's
      copyRow(0.0, 2),               // pooled from another host: the count is the GPU's
      copyRow(0.0, -1),              // a CPU row
      copyRow(9.0, 3, kColdSuffix),  // a cold unit's: the same point again
  };
  const std::vector<predictors::LaunchSample> s = launchSamples(rows);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].kernels, 1);
  EXPECT_EQ(s[1].kernels, 2);
  EXPECT_EQ(s[1].f.op, "aten::copy_");
}

}  // namespace
}  // namespace tracetwin::calibration
