// Hand-built op lists with answers worked out on paper.
#include "predictors/simulation/critical_path.h"

#include <gtest/gtest.h>

namespace tracetwin::predictors {
namespace {

SimOp kernel(double device_us, double launch_us = 1, int64_t stream = 0) {
  SimOp s;
  s.t4 = launch_us;
  s.device_us = device_us;
  s.stream = stream;
  return s;
}

TEST(CriticalPath, DeviceBoundKernelsOverlapTheCpu) {
  // Launch 1 us each, kernels 10 us: CPU done at 3, device at 1 + 30 = 31.
  SimResult r = simulate({kernel(10), kernel(10), kernel(10)});
  EXPECT_DOUBLE_EQ(r.iteration_us, 31);
  EXPECT_DOUBLE_EQ(r.device_active_us, 30);
  EXPECT_DOUBLE_EQ(r.device_idle_us, 1);
  EXPECT_DOUBLE_EQ(r.cpu_bound_us, 1);  // waiting for the first launch
  EXPECT_DOUBLE_EQ(r.start_us[1], 11);
}

TEST(CriticalPath, CpuBoundGapsWhenLaunchesAreSlow) {
  // Each op: T1 5 + T2 3 + T4 2 + T3 1 = 11 us of CPU; kernels 4 us.
  std::vector<SimOp> ops(3, kernel(4, 2));
  for (SimOp& s : ops) {
    s.t1 = 5;
    s.t2 = 3;
    s.t3 = 1;
  }
  SimResult r = simulate(ops);
  // Kernel i starts at 11 i + 10, ends 11 i + 14; CPU ends at 33.
  EXPECT_DOUBLE_EQ(r.start_us[2], 32);
  EXPECT_DOUBLE_EQ(r.iteration_us, 36);
  EXPECT_DOUBLE_EQ(r.device_active_us, 12);
  EXPECT_DOUBLE_EQ(r.cpu_bound_us, 24);  // gaps 10 + 7 + 7
  EXPECT_DOUBLE_EQ(r.device_idle_us, 24);
}

TEST(CriticalPath, SyncJoinsCpuToStream) {
  SimOp big = kernel(100);
  SimOp item = kernel(1);
  item.sync = true;
  SimOp next = kernel(5);
  next.t1 = 2;
  SimResult r = simulate({big, item, next});
  // item's kernel runs 101..102; the CPU waits until 102, then T1 2 + T4 1.
  EXPECT_DOUBLE_EQ(r.start_us[2], 105);
  EXPECT_DOUBLE_EQ(r.iteration_us, 110);
  EXPECT_DOUBLE_EQ(r.cpu_bound_us, 1 + 3);
}

TEST(CriticalPath, CrossStreamWaitAndExposedCommunication) {
  SimOp compute1 = kernel(50);
  SimOp comm = kernel(30, 1, 1);
  comm.is_comm = true;
  comm.wait_stream = 0;         // waits for compute1 (ends 51)
  SimOp compute2 = kernel(20);  // overlaps the collective
  SimOp opt = kernel(10);
  opt.wait_stream = 1;  // needs the reduced gradients
  SimResult r = simulate({compute1, comm, compute2, opt});
  EXPECT_DOUBLE_EQ(r.start_us[1], 51);
  EXPECT_DOUBLE_EQ(r.start_us[2], 51);
  EXPECT_DOUBLE_EQ(r.end_us[1], 81);
  EXPECT_DOUBLE_EQ(r.start_us[3], 81);
  EXPECT_DOUBLE_EQ(r.iteration_us, 91);
  // Comm 51..81 overlaps compute2 51..71: 10 us exposed.
  EXPECT_DOUBLE_EQ(r.exposed_comm_us, 10);
  EXPECT_DOUBLE_EQ(r.device_active_us, 90);
}

TEST(CriticalPath, CollectiveWaitsForSlowestRankWithoutCountingAsCpuBound) {
  SimOp comm = kernel(10);
  comm.is_comm = true;
  comm.rank_arrival_us = 40;
  SimResult r = simulate({comm});
  EXPECT_DOUBLE_EQ(r.start_us[0], 40);
  EXPECT_DOUBLE_EQ(r.iteration_us, 50);
  EXPECT_DOUBLE_EQ(r.cpu_bound_us, 0);
  EXPECT_DOUBLE_EQ(r.exposed_comm_us, 10);
}

TEST(CriticalPath, AThreadTakesOverWhereTheOtherThreadLeftOff) {
  // Forward on thread 0, backward on thread 1 while thread 0 blocks, the
  // optimizer on thread 0 again: the CPU clocks hand over at each switch.
  SimOp forward = kernel(10);  // CPU 0-1, device 1-11
  SimOp backward = kernel(0, 0);
  backward.launches = 0;
  backward.t5 = 100;  // a 100 us CPU-only op on thread 1
  backward.thread = 1;
  SimOp optimizer = kernel(10);
  SimResult r = simulate({forward, backward, optimizer});
  EXPECT_DOUBLE_EQ(r.start_us[1], 1);
  EXPECT_DOUBLE_EQ(r.end_us[1], 101);
  EXPECT_DOUBLE_EQ(r.start_us[2], 102);  // launched after the hand-back
  EXPECT_DOUBLE_EQ(r.iteration_us, 112);
}

TEST(CriticalPath, CpuDeviceRunsOpsOnTheThread) {
  std::vector<SimOp> ops(4);
  for (SimOp& s : ops) {
    s.cpu_only = true;
    s.t1 = 2;
    s.device_us = 8;
  }
  SimResult r = simulate(ops);
  EXPECT_DOUBLE_EQ(r.iteration_us, 40);
  EXPECT_DOUBLE_EQ(r.device_active_us, 32);
  EXPECT_DOUBLE_EQ(r.cpu_bound_us, 8);
  EXPECT_DOUBLE_EQ(r.end_us[3], 40);
}

TEST(CriticalPath, MultipleLaunchesSplitDeviceTimeWithT5Between) {
  SimOp s = kernel(30, 2);
  s.launches = 3;
  s.t5 = 4;
  SimResult r = simulate({s});
  // Launch ends at 2, 8, 14; kernels of 10 us back to back: 2..32.
  EXPECT_DOUBLE_EQ(r.start_us[0], 2);
  EXPECT_DOUBLE_EQ(r.end_us[0], 32);
}

}  // namespace
}  // namespace tracetwin::predictors
