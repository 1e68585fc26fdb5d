// replayGraph on hand-built graphs: overload fallback, undefined and optional
// tensors, failures that do not stop the replay, strict mode, skipped custom
// ops, settle iterations, interruption, and the CUDA-less host.
#include "replay/replayer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/errors.h"
#include "replay/device/fake_device_timer.h"
#include "tests/support/graphs.h"

namespace tracetwin::replay {
namespace {

using testing::GraphBuilder;
using testing::intValue;
using testing::tensorValue;

const char* kAdd = "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";
const char* kMm = "aten::mm(Tensor self, Tensor mat2) -> Tensor";

ReplayOptions quick() {
  ReplayOptions o;
  o.warmup_iters = 0;
  o.measured_iters = 2;
  return o;
}

TEST(Replayer, ReplaysAChainAndBindsOutputsByIdentity) {
  GraphBuilder b;
  b.op(kAdd, {tensorValue(1, 1, {64}), tensorValue(2, 2, {64}), intValue(1)},
       {tensorValue(3, 3, {64})});
  b.op(kMm, {tensorValue(4, 4, {8, 8}), tensorValue(5, 5, {8, 8})}, {tensorValue(6, 6, {8, 8})});
  b.op(kAdd, {tensorValue(3, 3, {64}), tensorValue(3, 3, {64}), intValue(2)},
       {tensorValue(7, 7, {64})});
  auto result = replayGraph(b.build(), quick());
  EXPECT_EQ(result.selected_ops, 3);
  EXPECT_EQ(result.replayed_ops, 3);
  EXPECT_DOUBLE_EQ(result.coverage, 1.0);
  EXPECT_TRUE(result.failed.empty());
  ASSERT_EQ(result.iterations_ms.size(), 2u);
  EXPECT_GT(result.iteration_ms_median, 0.0);
  // The loop between the timed calls costs something, and less than the iteration.
  EXPECT_GT(result.outside_ops_ms, 0.0);
  EXPECT_LT(result.outside_ops_ms, result.iteration_ms_median);
  ASSERT_EQ(result.per_op.size(), 3u);
  EXPECT_EQ(result.per_op[1].name, "aten::mm");
  EXPECT_GT(result.peak_memory_bytes, 0);
  EXPECT_GT(result.trace_peak_bytes, 0);
  EXPECT_LE(result.peak_memory_bytes, result.trace_peak_bytes * 12 / 10);
}

// Each measured iteration's CPU time (replay/cpu_time.h) is reported beside
// its wall time: one per measured iteration, positive for a 256^3 mm, and its
// median is the median of those.
TEST(Replayer, ReportsTheCpuTimeOfEachMeasuredIteration) {
  GraphBuilder b;
  b.op(kMm, {tensorValue(1, 1, {256, 256}), tensorValue(2, 2, {256, 256})},
       {tensorValue(3, 3, {256, 256})});
  ReplayOptions o = quick();
  o.measured_iters = 3;
  auto result = replayGraph(b.build(), o);
  ASSERT_EQ(result.iterations_cpu_ms.size(), 3u);
  for (double ms : result.iterations_cpu_ms) EXPECT_GT(ms, 0.0);
  std::vector<double> sorted = result.iterations_cpu_ms;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_DOUBLE_EQ(result.iteration_cpu_ms_median, sorted[1]);
}

// An output above glibc's largest mmap threshold (32 MiB) is mapped afresh in
// every iteration, so each measured iteration counts its first-touch faults.
TEST(Replayer, CountsThePageFaultsOfEachMeasuredIteration) {
  constexpr int64_t kFloats = int64_t{10} << 20;  // 40 MiB
  GraphBuilder b;
  b.op(kAdd, {tensorValue(1, 1, {kFloats}), tensorValue(2, 2, {kFloats}), intValue(1)},
       {tensorValue(3, 3, {kFloats})});
  auto result = replayGraph(b.build(), quick());
  ASSERT_EQ(result.iterations_ms.size(), 2u);
#if defined(__linux__)
  ASSERT_EQ(result.page_faults.size(), result.iterations_ms.size());
  for (int64_t faults : result.page_faults) EXPECT_GT(faults, 0);
#endif
}

// A result is freed after its last use, between the ops, not by its op's
// next call an iteration later: a view of a 40 MiB output mapped afresh
// each iteration used to unmap the previous iteration's inside its own
// timed call (~2.7 ms here for 10,240 pages; transformer_big's views of its
// 512 MB logits took 36-38 ms). Against the add that faults the same pages
// in, in the same run: a view costs microseconds.
TEST(Replayer, AResultIsFreedAfterItsLastUseNotInItsOpsNextCall) {
  constexpr int64_t kFloats = int64_t{10} << 20;  // 40 MiB
  GraphBuilder b;
  b.op(kAdd, {tensorValue(1, 1, {kFloats}), tensorValue(2, 2, {kFloats}), intValue(1)},
       {tensorValue(3, 3, {kFloats})});
  b.op("aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
       {tensorValue(3, 3, {kFloats}), testing::intListValue({-1})}, {tensorValue(4, 3, {kFloats})});
  ReplayOptions o = quick();
  o.warmup_iters = 1;  // so every measured view follows one of the previous iteration
  o.measured_iters = 3;
  auto result = replayGraph(b.build(), o);
  ASSERT_EQ(result.replayed_ops, 2);
  const double add_us = result.per_op[0].cpu_us;
  const double view_us = result.per_op[1].cpu_us;
  EXPECT_LT(view_us, add_us / 50) << "add " << add_us << " us, view " << view_us << " us";
}

TEST(Replayer, NewerOverloadFallsBackToARegisteredOneByArgumentNames) {
  GraphBuilder b;
  // An overload LibTorch 1.13 never had, with add.Tensor's arguments.
  b.op("aten::add.Tensor_v2(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
       {tensorValue(1, 1, {16}), tensorValue(2, 2, {16}), intValue(1)}, {tensorValue(3, 3, {16})});
  auto result = replayGraph(b.build(), quick());
  EXPECT_EQ(result.replayed_ops, 1);
  ASSERT_EQ(result.overload_mappings.size(), 1u);
  EXPECT_NE(result.overload_mappings[0].find("aten::add.Tensor_v2 -> aten::add."),
            std::string::npos)
      << result.overload_mappings[0];
}

TEST(Replayer, UndefinedAndOptionalTensorsPassAsNone) {
  GraphBuilder b;
  // native_batch_norm with weight recorded undefined, bias as None.
  b.op(
      "aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
      "Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
      {tensorValue(1, 1, {4, 3, 5, 5}), testing::undefinedTensor(2), testing::noneValue(),
       tensorValue(3, 3, {3}), tensorValue(4, 4, {3}), testing::boolValue(true),
       testing::doubleValue(0.1), testing::doubleValue(1e-5)},
      {tensorValue(5, 5, {4, 3, 5, 5}), tensorValue(6, 6, {3}), tensorValue(7, 7, {3})});
  auto result = replayGraph(b.build(), quick());
  EXPECT_TRUE(result.failed.empty()) << result.failed.front().reason;
  EXPECT_EQ(result.replayed_ops, 1);
}

core::Graph graphWithABadMm() {
  GraphBuilder b;
  b.op(kMm, {tensorValue(1, 1, {4, 5}), tensorValue(2, 2, {4, 5})}, {tensorValue(3, 3, {4, 5})});
  b.op(kAdd, {tensorValue(3, 3, {4, 5}), tensorValue(4, 4, {4, 5}), intValue(1)},
       {tensorValue(5, 5, {4, 5})});
  return b.build();
}

TEST(Replayer, AFailingOpIsRecordedAndTheReplayGoesOn) {
  auto result = replayGraph(graphWithABadMm(), quick());
  ASSERT_EQ(result.failed.size(), 1u);
  EXPECT_EQ(result.failed[0].name, "aten::mm");
  EXPECT_FALSE(result.failed[0].reason.empty());
  EXPECT_EQ(result.replayed_ops, 1) << "the add after it still ran (on a stand-in input)";
  EXPECT_DOUBLE_EQ(result.coverage, 0.5);
}

// Its throw (a c10::Error message, built with a backtrace) is no work the
// original did: after failing in the warm-up the op is not called again, so
// no measured iteration times it.
TEST(Replayer, AFailedOpIsNotCalledAgain) {
  ReplayOptions o = quick();
  o.warmup_iters = 1;
  auto result = replayGraph(graphWithABadMm(), o);
  ASSERT_EQ(result.failed.size(), 1u);
  ASSERT_EQ(result.per_op.size(), 2u);
  EXPECT_EQ(result.per_op[0].name, "aten::mm");
  EXPECT_EQ(result.per_op[0].cpu_us, 0.0) << "timed after it failed";
  EXPECT_GT(result.per_op[1].cpu_us, 0.0);
  EXPECT_EQ(result.replayed_ops, 1);
}

TEST(Replayer, StrictModeTurnsAFailureIntoAnError) {
  ReplayOptions o = quick();
  o.strict = true;
  EXPECT_THROW(replayGraph(graphWithABadMm(), o), RuntimeFailure);
}

core::Graph graphWithACustomOp() {
  GraphBuilder b;
  b.op("mylib::fused_thing(Tensor self) -> Tensor", {tensorValue(1, 1, {4})},
       {tensorValue(2, 2, {4})});
  b.op(kAdd, {tensorValue(2, 2, {4}), tensorValue(2, 2, {4}), intValue(1)},
       {tensorValue(3, 3, {4})});
  return b.build();
}

TEST(Replayer, UnregisteredCustomOpsAreSkippedWithAReason) {
  auto result = replayGraph(graphWithACustomOp(), quick());
  ASSERT_EQ(result.skipped.size(), 1u);
  EXPECT_NE(result.skipped[0].reason.find("not registered"), std::string::npos)
      << result.skipped[0].reason;
  EXPECT_EQ(result.replayed_ops, 1);
  ReplayOptions o = quick();
  o.strict = true;
  EXPECT_THROW(replayGraph(graphWithACustomOp(), o), RuntimeFailure);
}

// The reader keeps a node whose op_schema does not parse (with a warning):
// replay says that is why it skipped it, not that no schema was recorded.
TEST(Replayer, AnOpWhoseRecordedSchemaDoesNotParseIsSkippedForThat) {
  GraphBuilder b;
  core::Node& bad = b.op(kAdd, {tensorValue(1, 1, {4}), tensorValue(2, 2, {4}), intValue(1)},
                         {tensorValue(3, 3, {4})});
  bad.op_schema_text = "aten::add.Tensor(Tensor self, Tensor other";
  bad.schema = nullptr;
  auto result = replayGraph(b.build(), quick());
  ASSERT_EQ(result.skipped.size(), 1u);
  EXPECT_NE(result.skipped[0].reason.find("its recorded op_schema does not parse"),
            std::string::npos)
      << result.skipped[0].reason;
}

TEST(Replayer, ASkippedOpWithARecordedTimeIsStoodInForButStillCountsAsSkipped) {
  const core::Graph graph = graphWithACustomOp();
  core::NodeId custom = core::kNoNode;
  for (const auto& n : graph.nodes()) {
    if (n.name == "mylib::fused_thing") custom = n.id;
  }
  ASSERT_NE(custom, core::kNoNode);
  ReplayOptions o = quick();
  // 30 ms: far above what the one replayable op takes, so the iteration
  // can only be this long if the stand-in ran.
  o.placeholder_us[custom] = 30000.0;
  o.placeholder_us[custom + 100] = 5.0;  // no such op: ignored
  auto result = replayGraph(graph, o);
  ASSERT_EQ(result.skipped.size(), 1u);
  EXPECT_LT(result.coverage, 1.0);
  ASSERT_EQ(result.placeholders.size(), 1u);
  EXPECT_EQ(result.placeholders[0].id, result.skipped[0].id);
  EXPECT_DOUBLE_EQ(result.placeholders[0].recorded_us, 30000.0);
  for (double ms : result.iterations_ms) EXPECT_GE(ms, 30.0);
}

// Recorded streams on a CPU replay: planned and reported, not applied (the
// CPU has no streams), and the replay itself is unchanged.
TEST(Replayer, RecordedStreamsOnTheCpuAreReportedNotApplied) {
  GraphBuilder b;
  const core::NodeId copy =
      b.op(kAdd, {tensorValue(1, 1, {64}), tensorValue(2, 2, {64}), intValue(1)},
           {tensorValue(3, 3, {64})})
          .id;
  const core::NodeId compute =
      b.op(kAdd, {tensorValue(3, 3, {64}), tensorValue(4, 4, {64}), intValue(1)},
           {tensorValue(5, 5, {64})})
          .id;
  ReplayOptions o = quick();
  o.recorded_streams = {{copy, 22}, {compute, 7}};
  const auto result = replayGraph(b.build(), o);
  EXPECT_EQ(result.replayed_ops, 2);
  EXPECT_FALSE(result.streams.applied);
  EXPECT_EQ(result.streams.recorded.size(), 2u);
  EXPECT_EQ(result.streams.cross_stream_waits, 1);
  EXPECT_NE(result.streams.note.find("one stream"), std::string::npos) << result.streams.note;
}

TEST(Replayer, StopRequestEndsTheReplayWithAPartialResult) {
  int calls = 0;
  ReplayOptions o = quick();
  o.should_stop = [&calls] { return ++calls > 1; };
  auto result = replayGraph(graphWithABadMm(), o);
  EXPECT_TRUE(result.interrupted);
  EXPECT_TRUE(result.iterations_ms.empty()) << "the first iteration never completed";
}

// Each measured iteration follows a refill and settle_iters untimed ones:
// with one warm-up, two measured and two settle iterations the timer stops
// 1 + 2 * (2 + 1) times, and only the 4th and 7th readings are measured.
TEST(Replayer, SettleIterationsRunUntimedBeforeEachMeasuredOne) {
  GraphBuilder b;
  b.op(kAdd, {tensorValue(1, 1, {64}), tensorValue(2, 2, {64}), intValue(1)},
       {tensorValue(3, 3, {64})});
  const core::Graph graph = b.build();
  ReplayOptions o;
  o.warmup_iters = 1;
  o.measured_iters = 2;
  o.settle_iters = 2;
  o.make_timer = [] {
    return std::make_unique<device::FakeDeviceTimer>(
        std::vector<double>{9.0, 50.0, 51.0, 1.5, 52.0, 53.0, 2.5});
  };
  const ReplayResult r = replayGraph(graph, o);
  EXPECT_EQ(r.iterations_ms, (std::vector<double>{1.5, 2.5}))
      << "the 4th and 7th readings: one warm-up, then two settle iterations before each";
  ASSERT_EQ(r.per_op.size(), 1u);
#if defined(__linux__)
  EXPECT_EQ(r.page_faults.size(), 2u) << "faults are counted around the measured iterations";
#endif

  o.settle_iters = -1;
  EXPECT_THROW(replayGraph(graph, o), UsageError);
}

// --host-time: each op with a target waits before its call for the
// original's gap and op beyond the replay's own (measured in the warm-up);
// a call already longer than the original's op gets no op wait, reported.
TEST(Replayer, HostTimeWaitsBeforeEachCallForWhatTheOriginalSpentBeyondTheReplay) {
  GraphBuilder b;
  const core::NodeId first =
      b.op(kAdd, {tensorValue(1, 1, {64}), tensorValue(2, 2, {64}), intValue(1)},
           {tensorValue(3, 3, {64})})
          .id;
  const core::NodeId second =
      b.op(kAdd, {tensorValue(3, 3, {64}), tensorValue(4, 4, {64}), intValue(1)},
           {tensorValue(5, 5, {64})})
          .id;
  const core::Graph graph = b.build();
  ReplayOptions o;
  o.warmup_iters = 2;
  o.measured_iters = 2;
  o.host_time_mode = "recorded";
  // 20 ms of op and 5 ms of gap: far above what a 64-float add costs, so the
  // waits are nearly all of them whatever this host's speed.
  o.host_targets = {{first, HostTarget{0, 20000}}, {second, HostTarget{5000, 0}}};
  const ReplayResult r = replayGraph(graph, o);
  EXPECT_EQ(r.host_time.mode, "recorded");
  EXPECT_EQ(r.host_time.ops_with_target, 2);
  EXPECT_EQ(r.host_time.warmup_samples, 1) << "the first warm-up iteration is not used";
  ASSERT_EQ(r.per_op.size(), 2u);
  // The waits are the targets less the replay's own warm-up times: nearly
  // all of them on a quiet host, less where a loaded one preempted a warm-up
  // call (a ctest -j2 run saw it), never more.
  EXPECT_GT(r.per_op[0].host_wait_us, 0.0);
  EXPECT_LE(r.per_op[0].host_wait_us, 20000.0);
  EXPECT_GT(r.per_op[1].host_wait_us, 0.0);
  EXPECT_LE(r.per_op[1].host_wait_us, 5000.0);
  EXPECT_EQ(r.host_time.ops_over, 1) << "the second add's call is longer than 0 us";
  // Where the wait runs (before the call, in the op's gap) and how long it
  // spins are host_time_test's, with a fake clock: here the spins end at
  // deadlines on a real clock, so a loaded host shortens them (a ctest -j2 at
  // load 7.6 read a 2.0 ms gap for a 5.0 ms plan, a fresh clone's 4.93 ms).

  ReplayOptions plain = o;
  plain.host_time_mode = "replayed";
  plain.host_targets.clear();
  const ReplayResult p = replayGraph(graph, plain);
  EXPECT_EQ(p.host_time.mode, "replayed");
  EXPECT_EQ(p.per_op[0].host_wait_us, 0.0);

  o.warmup_iters = 0;
  EXPECT_THROW(replayGraph(graph, o), UsageError) << "nothing measures the replay's own calls";
}

TEST(Replayer, CudaOnAHostWithoutOneIsUnavailable) {
  ReplayOptions o = quick();
  o.device = "cuda";
  try {
    replayGraph(graphWithABadMm(), o);
    GTEST_SKIP() << "this host has a usable CUDA device";
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
  }
}

TEST(Replayer, BadOptionsAreUsageErrors) {
  ReplayOptions o = quick();
  o.measured_iters = 0;
  EXPECT_THROW(replayGraph(graphWithABadMm(), o), UsageError);
  o = quick();
  o.device = "tpu";
  EXPECT_THROW(replayGraph(graphWithABadMm(), o), UsageError);
}

}  // namespace
}  // namespace tracetwin::replay
