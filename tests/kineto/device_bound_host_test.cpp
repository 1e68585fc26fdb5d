// The host span of a device-bound original (core/kineto/device_bound_host.h):
// the step simulated from recorded kernels and a corrected host, and the
// largest host span that gives the unprofiled step.
#include "core/kineto/device_bound_host.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "core/kineto/kineto_reader.h"
#include "core/kineto/recorded_host_time.h"
#include "core/trace_reader.h"
#include "tests/support/paths.h"

namespace tracetwin::core::kineto {
namespace {

RecordedHostOp hostOp(double gap, double op, int64_t events = 0) {
  RecordedHostOp o;
  o.recorded_gap_us = gap;
  o.recorded_op_us = op;
  o.op_events = events;
  return o;
}

OpDeviceWork launches(std::vector<OpDeviceWork::Kernel> kernels) {
  OpDeviceWork w;
  w.kernels = std::move(kernels);
  return w;
}

TEST(SimulatedStep, KernelsStartAtTheirLaunchOrWhenTheirStreamIsFree) {
  // Two 10 us ops, each launching a 30 us kernel at its start on stream 7.
  const std::vector<RecordedHostOp> ops = {hostOp(0, 10), hostOp(0, 10)};
  const std::vector<OpDeviceWork> work = {launches({{0, 7, 30}}), launches({{0, 7, 30}})};
  EXPECT_DOUBLE_EQ(simulatedStepUs(ops, work, ProfilerCorrection{}), 60.0) << "device-bound";
  EXPECT_DOUBLE_EQ(simulatedStepUs(ops, work, ProfilerCorrection{0.0, 0.0}), 60.0)
      << "no host time: the device alone";
  // On two streams they overlap: the second starts at its launch, 10 us in.
  const std::vector<OpDeviceWork> two = {launches({{0, 7, 30}}), launches({{0, 8, 30}})};
  EXPECT_DOUBLE_EQ(simulatedStepUs(ops, two, ProfilerCorrection{}), 40.0);
  // Host-bound: 100 us ops with 5 us kernels launched at their ends.
  const std::vector<RecordedHostOp> slow = {hostOp(0, 100), hostOp(0, 100)};
  const std::vector<OpDeviceWork> late = {launches({{100, 7, 5}}), launches({{100, 7, 5}})};
  EXPECT_DOUBLE_EQ(simulatedStepUs(slow, late, ProfilerCorrection{}), 205.0);
  EXPECT_DOUBLE_EQ(simulatedStepUs(slow, late, ProfilerCorrection{0.0, 0.5}), 105.0)
      << "the launch keeps its place in the halved op";
}

TEST(SimulatedStep, ASynchronisingCallWaitsForTheDeviceInsteadOfItsRecordedTime) {
  // Op 0 launches a 50 us kernel; op 1 (40 us recorded) is 30 us of waiting
  // in a synchronise at 5 us, then 5 us of host work.
  std::vector<RecordedHostOp> ops = {hostOp(0, 10), hostOp(0, 40)};
  std::vector<OpDeviceWork> work = {launches({{0, 1, 50}}), OpDeviceWork{}};
  work[1].syncs.push_back({5, 30});
  // Host reaches the sync at 15 us and waits to 50, then 5 us more: 55.
  EXPECT_DOUBLE_EQ(simulatedStepUs(ops, work, ProfilerCorrection{}), 55.0);
}

TEST(HostSpanTarget, AHostBoundStepKeepsTheStepAsItsHostSpan) {
  // 200 us recorded host, a 100 us step, 1 us kernels: the host bounds it.
  const std::vector<RecordedHostOp> ops = {hostOp(0, 100, 1), hostOp(0, 100, 1)};
  const std::vector<OpDeviceWork> work = {launches({{100, 7, 1}}), launches({{100, 7, 1}})};
  const HostSpanTarget t = hostSpanTarget(ops, 2, work, 100.0);
  EXPECT_FALSE(t.device_bound);
  EXPECT_DOUBLE_EQ(t.host_us, 100.0);
  EXPECT_NEAR(t.simulated_step_us, 101.0, 1e-9) << "the last kernel trails";
}

TEST(HostSpanTarget, ADeviceBoundStepGetsTheHostSpanThatGivesItsStep) {
  // Each op launches a 40 us kernel at its end: 80 us of device work. The
  // recorded host is 120 us (profiled), the unprofiled step 90 us. A host
  // span of 90 would run the kernels at 45-85 and 90-130 us: a 130 us step.
  const std::vector<RecordedHostOp> ops = {hostOp(0, 60, 1), hostOp(0, 60, 1)};
  const std::vector<OpDeviceWork> work = {launches({{60, 7, 40}}), launches({{60, 7, 40}})};
  const HostSpanTarget t = hostSpanTarget(ops, 2, work, 90.0);
  EXPECT_TRUE(t.device_bound);
  EXPECT_DOUBLE_EQ(t.device_only_us, 80.0);
  // The first kernel starts when op 0 ends (H/2) and the step is H/2 + 80.
  EXPECT_NEAR(t.host_us, 20.0, 1e-2);
  EXPECT_NEAR(t.simulated_step_us, 90.0, 1e-2);
}

TEST(HostSpanTarget, ADeviceLongerThanTheStepLeavesTheKnee) {
  // 80 us of kernels, a 70 us step (the profiler slowed the kernels): the
  // largest host span that keeps the device-only step, within half a percent.
  const std::vector<RecordedHostOp> ops = {hostOp(0, 60, 1), hostOp(0, 60, 1)};
  const std::vector<OpDeviceWork> work = {launches({{0, 7, 40}}), launches({{60, 7, 40}})};
  const HostSpanTarget t = hostSpanTarget(ops, 2, work, 70.0);
  EXPECT_TRUE(t.device_bound);
  EXPECT_LE(t.simulated_step_us, 80.0 + 0.35 + 1e-6);
  EXPECT_GT(t.host_us, 0.0) << "op 0's kernel covers op 1's host time";
}

TEST(HostSpanTarget, AStepWithSynchronisingCallsKeepsTheStep) {
  // The device-bound step above, with a synchronise in its second op.
  const std::vector<RecordedHostOp> ops = {hostOp(0, 60, 1), hostOp(0, 60, 1)};
  std::vector<OpDeviceWork> work = {launches({{60, 7, 40}}), launches({{60, 7, 40}})};
  work[1].syncs.push_back({59, 1});
  const HostSpanTarget t = hostSpanTarget(ops, 2, work, 90.0);
  EXPECT_TRUE(t.sync_calls);
  EXPECT_FALSE(t.device_bound);
  EXPECT_DOUBLE_EQ(t.host_us, 90.0);
  EXPECT_GT(t.simulated_step_us, 1.02 * 90.0) << "what the simulation would have said";
  // For a prediction's T1-T5 the step gets the simulated span all the same.
  const HostSpanTarget p = hostSpanTarget(ops, 2, work, 90.0, /*synchronising_steps=*/true);
  EXPECT_TRUE(p.device_bound);
  EXPECT_LT(p.host_us, 90.0);
  EXPECT_NEAR(p.simulated_step_us, 90.0, 0.5);
}

// The H100 captures of data/h100/s31 (2026-11-27): what the correction aims
// at, against the unprofiled step of the capture's meta file.
struct StoredCapture {
  RecordedHostTime host;
  double step_ms = 0;
};

StoredCapture storedCapture(const std::string& stem) {
  const Graph graph = readTrace(testing::dataPath(stem + ".et.json.gz"));
  const KinetoTrace trace = readKinetoTrace(testing::dataPath(stem + ".kineto.json.gz"));
  std::ifstream meta(testing::dataPath(stem + ".meta.json"));
  StoredCapture c;
  c.step_ms = nlohmann::json::parse(meta).at("iteration_ms").get<double>();
  c.host = recordedHostTime(linkTraces(graph, trace), trace, c.step_ms);
  return c;
}

TEST(StoredH100Captures, ADeviceBoundCnnStepAimsBelowItsStep) {
  // cnn, batch 256: kernels 7.14 ms of a 7.61 ms step, a profiled host span
  // of 11.7 ms, 5.3 ms of it two CUPTI buffer requests, and no synchronising
  // call. Aimed at the step the replay measured 11.63 ms (1.528) with those
  // stalls in the recorded host time, and the simulation of that gave 1.522;
  // without them it gives 1.174 (a GPU session re-measures the replay). The
  // span that gives the step: 2.28 ms with the stalls, 4.03 ms without.
  const StoredCapture c = storedCapture("h100/s31/check/cnn_fp32");
  EXPECT_TRUE(c.host.device_bound);
  EXPECT_NEAR(c.host.device_only_ms, 7.14, 0.01);
  EXPECT_NEAR(c.host.profiler_stall_ms, 5.30, 0.01);
  EXPECT_LT(c.host.target_ms, 0.6 * c.step_ms);
  EXPECT_NEAR(c.host.span_ms, c.host.target_ms, 1e-6);
  EXPECT_NEAR(c.host.simulated_step_ms, c.step_ms, 0.01 * c.step_ms);
}

TEST(StoredH100Captures, ForAPredictionAnEncoderWithSynchronisingCallsAimsBelowItsStep) {
  // encoder fp32: 30 synchronising calls, kernels 9.99 of an 11.79 ms step.
  // Its T1-T5 aimed at the step predicted it at 1.317 of the original; at
  // the simulated span (9.80 ms, the profiler's stalls out), 1.039
  // (scripts/gpu-fit-eval.py, "self").
  const std::string stem = "h100/s31/check/encoder_fp32";
  const Graph graph = readTrace(testing::dataPath(stem + ".et.json.gz"));
  const KinetoTrace trace = readKinetoTrace(testing::dataPath(stem + ".kineto.json.gz"));
  std::ifstream meta(testing::dataPath(stem + ".meta.json"));
  const double step_ms = nlohmann::json::parse(meta).at("iteration_ms").get<double>();
  const RecordedHostTime h =
      recordedHostTime(linkTraces(graph, trace), trace, step_ms, HostTimeFor::kPrediction);
  EXPECT_TRUE(h.sync_calls);
  EXPECT_TRUE(h.device_bound);
  EXPECT_LT(h.target_ms, 0.85 * step_ms);
  EXPECT_NEAR(h.simulated_step_ms, step_ms, 0.01 * step_ms);
}

TEST(StoredH100Captures, HostBoundStepsAndStepsWithSynchronisingCallsAimAtTheStep) {
  for (const char* stem : {"h100/s31/hosttime/mlp", "h100/s31/hosttime/embbag",
                           "h100/s31/check/encoder_fp32", "h100/s31/check/decoder_bf16"}) {
    const StoredCapture c = storedCapture(stem);
    EXPECT_FALSE(c.host.device_bound) << stem;
    EXPECT_NEAR(c.host.target_ms, c.step_ms, 1e-9) << stem;
    EXPECT_NEAR(c.host.span_ms, c.step_ms, 1e-6) << stem;
  }
}

}  // namespace
}  // namespace tracetwin::core::kineto
