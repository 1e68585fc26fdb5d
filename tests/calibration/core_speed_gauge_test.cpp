#include "calibration/core_speed_gauge.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <vector>

#include "calibration/steady_cores_run.h"
#include "core/errors.h"

namespace tracetwin::calibration {
namespace {

// A host whose cores take a set time for the gauge's work; the gauge pins
// its thread to a core and reads that core's time. Nothing sleeps: a sleep
// runs whatever `on_sleep` does to the host (a tenant leaving a core).
struct FakeCores {
  explicit FakeCores(std::map<int, double> times = {}) : us(std::move(times)) {}
  std::map<int, double> us;  // the work's time per CPU now
  int pinned = -1;           // -1: the thread's original CPUs
  int sleeps = 0;
  std::function<void(FakeCores&)> on_sleep;

  CoreSpeedGauge gauge(std::vector<int> cpus, int warmup_rounds) {
    return CoreSpeedGauge(
        std::move(cpus),
        [this] {
          if (pinned < 0) ADD_FAILURE() << "read on no CPU in particular";
          return us.at(pinned);
        },
        [this](int cpu) { pinned = cpu; },
        [this](double) {
          ++sleeps;
          if (on_sleep) on_sleep(*this);
        },
        warmup_rounds);
  }
};

TEST(CoreSpeedGauge, ReadsEveryCoreAgainstTheFastPhaseOfAllOfThem) {
  FakeCores host({{0, 60.0}, {1, 140.0}});
  CoreSpeedGauge g = host.gauge({0, 1}, /*warmup_rounds=*/3);
  EXPECT_DOUBLE_EQ(g.baselineUs(), 60);
  const std::vector<double> s = g.readAll();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_DOUBLE_EQ(s[0], 1.0);
  EXPECT_DOUBLE_EQ(s[1], 140.0 / 60.0);  // slow from the first reading on, and seen as slow
  EXPECT_EQ(host.pinned, -1);            // back on its own CPUs
  EXPECT_EQ(describeCoreSlowdowns(g.cpus(), s), "cpu0 1.00x, cpu1 2.33x");
}

TEST(CoreSpeedGauge, TheThreadGoesBackToItsCpusWhenAReadingThrows) {
  FakeCores host({{0, 60.0}});  // CPU 3 has no time: at() throws
  CoreSpeedGauge bad = host.gauge({0, 3}, /*warmup_rounds=*/0);
  EXPECT_THROW(bad.readAll(), std::out_of_range);
  EXPECT_EQ(host.pinned, -1);
}

TEST(CoreSpeedGauge, WaitsUntilEveryCoreIsSteadyOrTheWaitRunsOut) {
  FakeCores host({{0, 60.0}, {1, 60.0}});
  CoreSpeedGauge g = host.gauge({0, 1}, 2);
  host.us[1] = 150;
  host.on_sleep = [](FakeCores& h) {
    if (h.sleeps == 3) h.us[1] = 62;  // the tenant leaves core 1
  };
  std::vector<double> s = g.waitForSteady(1.25, /*max_wait_s=*/10, /*poll_s=*/0.5);
  EXPECT_EQ(host.sleeps, 3);
  EXPECT_NEAR(slowestCore(s), 62.0 / 60.0, 1e-12);
  EXPECT_DOUBLE_EQ(g.waitedSeconds(), 1.5);

  host.on_sleep = nullptr;
  host.us[0] = 120;  // now core 0 stays slow
  s = g.waitForSteady(1.25, /*max_wait_s=*/1.0, /*poll_s=*/0.5);
  EXPECT_EQ(host.sleeps, 3 + 2);  // gave up after 1 s of sleeping
  EXPECT_DOUBLE_EQ(slowestCore(s), 2.0);
  EXPECT_DOUBLE_EQ(g.waitedSeconds(), 2.5);
}

TEST(CoreSpeedGauge, NeedsACpu) {
  FakeCores host;
  EXPECT_THROW(host.gauge({}, 0), UsageError);
}

// The gauge on this machine: every CPU of the affinity mask, a positive
// slowdown each, and the thread's mask as it was.
TEST(CoreSpeedGauge, ReadsThisHostsCores) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  CoreSpeedGauge g = CoreSpeedGauge::onThisHost(2);
  EXPECT_EQ(int(g.cpus().size()), CPU_COUNT(&before));
  for (double s : g.readAll()) EXPECT_GE(s, 1.0 - 1e-12);
  cpu_set_t after;
  ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

TEST(SteadyCoresRun, RunsOnceOnSteadyCores) {
  FakeCores host({{0, 60.0}, {1, 60.0}});
  CoreSpeedGauge g = host.gauge({0, 1}, 1);
  int runs = 0;
  const SteadyCoresRun r = runOnSteadyCores(g, {}, [&] { return 10.0 + ++runs; });
  EXPECT_EQ(runs, 1);
  EXPECT_DOUBLE_EQ(r.value, 11);
  EXPECT_TRUE(r.steady);
  EXPECT_EQ(r.runs, 1);
  EXPECT_EQ(r.kept_run, 0);
  EXPECT_DOUBLE_EQ(r.waited_s, 0);
}

TEST(SteadyCoresRun, RunsAgainWhenACoreSlowedDuringTheRun) {
  FakeCores host({{0, 60.0}, {1, 60.0}});
  CoreSpeedGauge g = host.gauge({0, 1}, 1);
  host.on_sleep = [](FakeCores& h) { h.us[1] = 61; };  // the tenant leaves while it waits
  int runs = 0;
  const SteadyCoresRun r = runOnSteadyCores(g, {1.25, 1.0, 2}, [&] {
    ++runs;
    if (runs == 1) host.us[1] = 130;  // a tenant arrives on core 1 during the first run
    return runs == 1 ? 40.0 : 25.0;
  });
  EXPECT_EQ(runs, 2);
  EXPECT_DOUBLE_EQ(r.value, 25);  // the steady run's, not the first
  EXPECT_TRUE(r.steady);
  EXPECT_EQ(r.runs, 2);
  EXPECT_EQ(r.kept_run, 1);
  EXPECT_DOUBLE_EQ(r.waited_s, 0.05);  // one poll before the second run
}

TEST(SteadyCoresRun, KeepsTheLeastDisturbedRunWhenNoneWasSteady) {
  FakeCores host({{0, 60.0}, {1, 60.0}});
  CoreSpeedGauge g = host.gauge({0, 1}, 1);
  const std::vector<double> core1 = {150, 90, 120};  // during runs 1, 2, 3
  const std::vector<double> steps = {50, 30, 40};
  host.on_sleep = [](FakeCores& h) { h.us[1] = 60; };  // steady again before each run
  int runs = 0;
  const SteadyCoresRun r = runOnSteadyCores(g, {1.25, 1.0, 2}, [&] {
    host.us[1] = core1[runs];
    return steps[runs++];
  });
  EXPECT_EQ(runs, 3);  // 1 + max_reruns
  EXPECT_DOUBLE_EQ(r.value, 30);
  EXPECT_DOUBLE_EQ(r.slowdown, 1.5);
  EXPECT_FALSE(r.steady);
  EXPECT_EQ(r.kept_run, 1);  // the second of three
}

TEST(SteadyCoresRun, AFailingRunLeavesWithItsError) {
  FakeCores host({{0, 60.0}});
  CoreSpeedGauge g = host.gauge({0}, 1);
  EXPECT_THROW(runOnSteadyCores(g, {}, []() -> double { throw RuntimeFailure("replay failed"); }),
               RuntimeFailure);
  EXPECT_EQ(host.pinned, -1);
}

}  // namespace
}  // namespace tracetwin::calibration
