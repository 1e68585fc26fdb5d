#include "calibration/steady_host_gate.h"

#include <gtest/gtest.h>

#include <deque>
#include <vector>

#include "calibration/host_speed_gauge.h"

namespace tracetwin::calibration {
namespace {

// A gauge that reads from a script of microseconds and never sleeps.
struct ScriptedHost {
  std::deque<double> readings;
  int reads = 0;
  int sleeps = 0;
  HostSpeedGauge gauge(int warmup) {
    return HostSpeedGauge([this] { return next(); }, [this](double) { ++sleeps; }, warmup);
  }
  double next() {
    ++reads;
    if (readings.empty()) ADD_FAILURE() << "the gauge read more often than scripted";
    const double us = readings.empty() ? 10 : readings.front();
    if (!readings.empty()) readings.pop_front();
    return us;
  }
};

CaseOutcome outcomeOf(double us, std::string failure = "") {
  CaseOutcome out;
  DatasetRow row;
  row.sample.measured_us = us;
  out.rows.push_back(row);
  out.failure = std::move(failure);
  return out;
}

TEST(HostSpeedGauge, SlowdownIsRelativeToTheFastestReadingWhileReadingsAreFew) {
  ScriptedHost host{{20, 10, 15, 30, 8}};
  HostSpeedGauge g = host.gauge(/*warmup=*/2);  // reads 20 then 10
  EXPECT_DOUBLE_EQ(g.baselineUs(), 10);
  EXPECT_DOUBLE_EQ(g.read(), 1.5);
  EXPECT_DOUBLE_EQ(g.read(), 3.0);
  EXPECT_DOUBLE_EQ(g.read(), 1.0);  // a new fastest
  EXPECT_DOUBLE_EQ(g.baselineUs(), 8);
}

TEST(HostSpeedGauge, OneLuckyReadingDoesNotBecomeTheBaseline) {
  ScriptedHost host;
  host.readings.assign(300, 20.0);
  host.readings[150] = 10;  // 2x faster, once
  host.readings.push_back(21);
  HostSpeedGauge g = host.gauge(300);
  EXPECT_DOUBLE_EQ(g.baselineUs(), 20);
  EXPECT_DOUBLE_EQ(g.read(), 21.0 / 20.0);
}

TEST(HostSpeedGauge, WaitsUntilTheHostIsSteadyOrTheWaitRunsOut) {
  ScriptedHost host{{10, 19, 18, 11}};
  HostSpeedGauge g = host.gauge(1);
  EXPECT_DOUBLE_EQ(g.waitForSteady(1.2, /*max_wait_s=*/1.0, /*poll_s=*/0.1), 1.1);
  EXPECT_EQ(host.sleeps, 2);

  host.readings = {19, 19, 19, 19};
  EXPECT_DOUBLE_EQ(g.waitForSteady(1.2, /*max_wait_s=*/0.3, /*poll_s=*/0.1), 1.9);
  EXPECT_EQ(host.sleeps, 2 + 3);  // gave up after 0.3 s of sleeping
}

TEST(HostSpeedGauge, TheReferenceWorkTakesMeasurableTime) {
  const double us = referenceWorkUs();
  EXPECT_GT(us, 0.5);
  EXPECT_LT(us, 1e5);
}

// A calibration reads the gauge thousands of times; the work's values must
// not decay into subnormal floats (which ran it 2.4x slower for good after
// ~1,200 readings of a five-family calibration).
TEST(HostSpeedGauge, TheReferenceWorkKeepsNormalFloats) {
  ReferenceWork work;
  for (int p = 0; p < 100000; ++p) work.pass();  // ~1,400 readings' worth
  EXPECT_GE(work.smallest(), 1.0f);
}

TEST(SteadyHostGate, ASteadyReplayRunsOnce) {
  ScriptedHost host{{10, /*before*/ 10.5, /*after*/ 11}};
  HostSpeedGauge g = host.gauge(1);
  SteadyHostGate gate(g, {});
  int replays = 0;
  const CaseOutcome out = gate.run([&] { return ++replays, outcomeOf(5); });
  EXPECT_EQ(replays, 1);
  ASSERT_EQ(out.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(out.rows[0].host_slowdown, 1.1);
  EXPECT_EQ(gate.stats().units, 1);
  EXPECT_EQ(gate.stats().steady, 1);
  EXPECT_EQ(gate.stats().reruns, 0);
}

TEST(SteadyHostGate, AReplayTheHostSlowedIsRunAgain) {
  // Steady before the first replay, slow after it; steady around the second.
  ScriptedHost host{{10, 10, 17, 10, 10.2}};
  HostSpeedGauge g = host.gauge(1);
  SteadyHostGate gate(g, {});
  std::vector<double> times = {9, 5};
  size_t replays = 0;
  const CaseOutcome out = gate.run([&] { return outcomeOf(times[replays++]); });
  EXPECT_EQ(replays, 2u);
  EXPECT_DOUBLE_EQ(out.rows[0].sample.measured_us, 5);
  EXPECT_DOUBLE_EQ(out.rows[0].host_slowdown, 1.02);
  EXPECT_EQ(gate.stats().reruns, 1);
  EXPECT_EQ(gate.stats().steady, 1);
}

TEST(SteadyHostGate, WhenTheHostNeverSettlesTheLeastSlowRunIsKept) {
  SteadyHostOptions o;
  o.max_reruns = 2;
  o.max_wait_s = 0;  // no polling: one reading before each replay
  // (before, after) per replay: (1.5, 1.6), (1.3, 1.4), (2.0, 1.5).
  ScriptedHost host{{10, 15, 16, 13, 14, 20, 15}};
  HostSpeedGauge g = host.gauge(1);
  SteadyHostGate gate(g, o);
  std::vector<double> times = {7, 6, 8};
  size_t replays = 0;
  const CaseOutcome out = gate.run([&] { return outcomeOf(times[replays++]); });
  EXPECT_EQ(replays, 3u);
  EXPECT_DOUBLE_EQ(out.rows[0].sample.measured_us, 6);
  EXPECT_DOUBLE_EQ(out.rows[0].host_slowdown, 1.4);
  EXPECT_EQ(gate.stats().steady, 0);
  EXPECT_EQ(gate.stats().reruns, 2);
}

TEST(SteadyHostGate, AFailedReplayIsNotRetried) {
  ScriptedHost host{{10, 10, 30}};
  HostSpeedGauge g = host.gauge(1);
  SteadyHostGate gate(g, {});
  int replays = 0;
  const CaseOutcome out = gate.run([&] { return ++replays, outcomeOf(5, "aten::x failed"); });
  EXPECT_EQ(replays, 1);
  EXPECT_EQ(out.failure, "aten::x failed");
}

}  // namespace
}  // namespace tracetwin::calibration
