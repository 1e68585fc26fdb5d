// Device timers and device discovery. On a host without a GPU (CI, this
// build machine) these check the exact "no GPU" behaviour; with a GPU they
// check the CUDA-event timer.
#include "replay/device/device_timer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/errors.h"
#include "replay/device/fake_device_timer.h"
#include "replay/device/kernel_collector.h"

namespace tracetwin::replay::device {
namespace {

TEST(DeviceTimer, SteadyClockMeasuresASleep) {
  auto timer = makeSteadyClockTimer();
  EXPECT_STREQ(timer->clockName(), "steady_clock");
  timer->start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double ms = timer->stopMs();
  // The sleep lasts at least 20 ms; 2 s of slack for a loaded 2-core host.
  EXPECT_GE(ms, 20.0);
  EXPECT_LT(ms, 2000.0);
  EXPECT_THROW(timer->stopMs(), UsageError);  // stopped twice
}

TEST(DeviceTimer, FakeTimerReplaysScriptedDurations) {
  FakeDeviceTimer timer({1.5, 2.5});
  EXPECT_THROW(timer.stopMs(), UsageError);
  timer.start();
  EXPECT_DOUBLE_EQ(timer.stopMs(), 1.5);
  timer.start();
  EXPECT_DOUBLE_EQ(timer.stopMs(), 2.5);
  timer.start();
  EXPECT_DOUBLE_EQ(timer.stopMs(), 2.5);  // last one repeats
  EXPECT_EQ(timer.starts(), 3);
  EXPECT_EQ(timer.stops(), 3u);
}

TEST(DeviceTimer, ParsesCudaDeviceStrings) {
  EXPECT_EQ(cudaIndexFromDevice("cuda"), 0);
  EXPECT_EQ(cudaIndexFromDevice("cuda:0"), 0);
  EXPECT_EQ(cudaIndexFromDevice("cuda:12"), 12);
  EXPECT_EQ(cudaIndexFromDevice("cpu"), -1);
  EXPECT_EQ(cudaIndexFromDevice("cuda:"), -1);
  EXPECT_EQ(cudaIndexFromDevice("cuda:x"), -1);
  EXPECT_EQ(cudaIndexFromDevice("cuda:-1"), -1);
}

// Without a usable GPU every CUDA entry point must refuse with a reason, and
// never crash.
TEST(DeviceTimer, NoGpuIsReportedWithItsReason) {
  const CudaProbe probe = probeCudaDevices();
  if (probe.count > 0) GTEST_SKIP() << "a CUDA device is present; see CudaEventTimerTimesSleep";
  EXPECT_FALSE(probe.reason.empty());
  EXPECT_EQ(cudaDeviceCount(), 0);
  try {
    requireCudaDevice(0);
    FAIL() << "requireCudaDevice(0) returned without a GPU";
  } catch (const UnavailableError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("no CUDA device"), std::string::npos) << msg;
    EXPECT_NE(msg.find(probe.reason), std::string::npos) << msg;
  }
  EXPECT_THROW(makeCudaEventTimer(0), UnavailableError);
  try {
    makeCuptiCollector(0);
    FAIL() << "makeCuptiCollector(0) returned without a GPU";
  } catch (const UnavailableError& e) {
    const std::string msg = e.what();
    const bool says_why = msg.find("no CUDA device") != std::string::npos ||
                          msg.find("not compiled with CUPTI") != std::string::npos;
    EXPECT_TRUE(says_why) << msg;
  }
}

TEST(DeviceTimer, CudaProbeMatchesTheBuild) {
  const CudaProbe probe = probeCudaDevices();
  if (!cudaCompiledIn()) {
    EXPECT_EQ(probe.count, 0);
    EXPECT_NE(probe.reason.find("built without the CUDA toolkit"), std::string::npos);
  } else if (probe.count == 0) {
    EXPECT_NE(probe.reason.find("cudaGetDeviceCount"), std::string::npos) << probe.reason;
  }
}

// What a GPU calibration writes into its spec: the GPU's, or a clear refusal.
TEST(DeviceTimer, CudaDeviceFactsDescribeTheGpuOrRefuse) {
  if (cudaDeviceCount() == 0) {
    try {
      cudaDeviceFacts(0);
      ADD_FAILURE() << "expected UnavailableError";
    } catch (const UnavailableError& e) {
      EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
    }
    return;
  }
  const CudaDeviceFacts f = cudaDeviceFacts(0);
  EXPECT_FALSE(f.name.empty());
  EXPECT_GT(f.multiprocessors, 1);
  EXPECT_GT(f.clock_hz, 1e8);
  EXPECT_GT(f.memory_bytes, int64_t{1} << 30);
}

TEST(DeviceTimer, CudaEventTimerTimesSleep) {
  if (cudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device: " << probeCudaDevices().reason;
  auto timer = makeCudaEventTimer(0);
  EXPECT_STREQ(timer->clockName(), "cuda_event");
  timer->start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  // Events on an idle stream complete at once: the elapsed device time is
  // the host's delay between the two records, at least the sleep.
  const double ms = timer->stopMs();
  EXPECT_GE(ms, 19.0);
  EXPECT_LT(ms, 2000.0);
}

TEST(DeviceTimer, OutOfRangeDeviceNamesTheCount) {
  const int count = cudaDeviceCount();
  if (count == 0) GTEST_SKIP() << "no CUDA device: " << probeCudaDevices().reason;
  try {
    requireCudaDevice(count);
    FAIL();
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("this host has " + std::to_string(count)),
              std::string::npos);
  }
}

}  // namespace
}  // namespace tracetwin::replay::device
