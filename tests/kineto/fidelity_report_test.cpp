#include "cli/fidelity_report.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace tracetwin::cli {
namespace {

using core::kineto::LinkedKernel;
using core::kineto::LinkedOp;
using core::kineto::LinkedTimeline;

LinkedOp op(core::NodeId id, const std::string& name, double start, double dur, double device) {
  LinkedOp o;
  o.id = id;
  o.name = name;
  o.matched = true;
  o.kineto_tid = 42;
  o.start_us = start;
  o.duration_us = dur;
  o.device_us = device;
  if (device > 0)
    o.kernels.push_back(LinkedKernel{"k_" + name, core::kineto::EventCategory::kKernel, 7, 0,
                                     start + 5, device, id, "cudaLaunchKernel"});
  return o;
}

replay::OpMeasurement measured(core::NodeId id, const std::string& family, double cpu, double dev) {
  replay::OpMeasurement m;
  m.id = id;
  m.family = family;
  m.cpu_us = cpu;
  m.device_us = dev;
  return m;
}

struct Fixture {
  LinkedTimeline original;
  replay::ReplayResult replayed;
  Fixture() {
    original.top_level_ops = 4;
    original.matched_ops = 3;
    original.iteration_start_us = 1000;
    original.iteration_ms = 2.0;
    original.iteration_source = "ProfilerStep#3";
    original.ops = {op(10, "aten::mm", 1000, 100, 400), op(11, "aten::relu", 1100, 50, 100),
                    op(12, "aten::mm", 1200, 100, 600)};
    LinkedOp missing;
    missing.id = 13;
    missing.name = "aten::add";
    original.ops.push_back(missing);
    replayed.device = "cuda:0";
    replayed.iterations_ms = {2.5, 3.0};
    replayed.iteration_ms_median = 2.75;
    replayed.per_op = {measured(10, "gemm", 150, 500), measured(11, "elementwise", 25, 50),
                       measured(12, "gemm", 150, 700), measured(13, "elementwise", 5, 5)};
  }
};

TEST(FidelityReport, ComparesPerFamilyAndPerIteration) {
  Fixture f;
  FidelityReport r = buildFidelityReport(f.original, f.replayed);
  EXPECT_EQ(r.compared_ops, 3);  // node 13 was not linked to the original
  ASSERT_EQ(r.families.size(), 2u);
  const FidelityFamilyRow& gemm = r.families[0];  // largest original time first
  EXPECT_EQ(gemm.family, "gemm");
  EXPECT_EQ(gemm.ops, 2);
  EXPECT_DOUBLE_EQ(gemm.original_cpu_ms, 0.2);
  EXPECT_DOUBLE_EQ(gemm.replay_cpu_ms, 0.3);
  EXPECT_DOUBLE_EQ(gemm.cpu_ratio, 1.5);
  EXPECT_DOUBLE_EQ(gemm.original_device_ms, 1.0);
  EXPECT_DOUBLE_EQ(gemm.device_ratio, 1.2);
  EXPECT_DOUBLE_EQ(r.families[1].device_ratio, 0.5);
  EXPECT_DOUBLE_EQ(r.total.original_device_ms, 1.1);
  EXPECT_DOUBLE_EQ(r.iteration_ratio, 1.375);
  nlohmann::json j = fidelityReportJson(r);
  ASSERT_EQ(j["iterations"].size(), 2u);
  EXPECT_DOUBLE_EQ(j["iterations"][1]["ratio"].get<double>(), 1.5);
  EXPECT_EQ(j["families"][0]["family"], "gemm");
  std::FILE* devnull = std::fopen("/dev/null", "w");
  ASSERT_NE(devnull, nullptr);
  printFidelityReport(r, devnull);
  std::fclose(devnull);
}

// With the host time around the ops: the original's gap before each op and
// its span against the replay's time before each call and the call, per
// family, and the host loop with and without the --host-time waits.
TEST(FidelityReport, ComparesTheHostTimeAroundTheOpsAndTheHostLoop) {
  Fixture f;
  f.replayed.per_op[0].gap_us = 5;
  f.replayed.per_op[2].gap_us = 45;
  f.replayed.per_op[1].gap_us = 2;
  f.replayed.host_loop_ms = 0.6;
  f.replayed.host_time.mode = "recorded";
  f.replayed.host_time.scale = 0.5;
  f.replayed.host_time.wait_ms = 0.2;
  FidelityReport r = buildFidelityReport(f.original, f.replayed);
  const FidelityFamilyRow& gemm = r.families[0];
  // Original gemm: op 10's 100 us (no gap: it starts the ProfilerStep), op
  // 12's 50 us gap after the relu and its 100 us.
  EXPECT_DOUBLE_EQ(gemm.original_host_ms, 0.25);
  EXPECT_DOUBLE_EQ(gemm.replay_host_ms, 0.35);
  EXPECT_DOUBLE_EQ(gemm.host_ratio, 1.4);
  EXPECT_DOUBLE_EQ(r.total.original_host_ms, 0.3);
  EXPECT_EQ(r.host_time_mode, "recorded");
  EXPECT_DOUBLE_EQ(r.host_scale, 0.5);
  EXPECT_DOUBLE_EQ(r.host_loop.original_ms, 0.3);
  EXPECT_DOUBLE_EQ(r.host_loop.ratio, 2.0);
  EXPECT_DOUBLE_EQ(r.host_loop.replay_without_waits_ms, 0.4);
  EXPECT_NEAR(r.host_loop.ratio_without_waits, 4.0 / 3.0, 1e-12);

  // The host time the replay used (less a profiler cost) replaces the raw one.
  core::kineto::RecordedHostTime host;
  host.span_ms = 0.15;
  host.recorded_span_ms = 0.3;
  host.profiler_us_per_event = 2.0;
  host.ops = {{10, "aten::mm", 0, 50, 0, 100, 0, 25}, {12, "aten::mm", 25, 50, 50, 100, 12, 25}};
  r = buildFidelityReport(f.original, f.replayed, &host);
  EXPECT_DOUBLE_EQ(r.families[0].original_host_ms, 0.125);
  EXPECT_DOUBLE_EQ(r.host_loop.original_ms, 0.15);
  EXPECT_DOUBLE_EQ(r.profiler_us_per_event, 2.0);
  const nlohmann::json j = fidelityReportJson(r);
  EXPECT_EQ(j["host_time"], "recorded");
  EXPECT_DOUBLE_EQ(j["host_loop"]["ratio"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(j["families"][0]["original_host_ms"].get<double>(), 0.125);
  std::FILE* devnull = std::fopen("/dev/null", "w");
  ASSERT_NE(devnull, nullptr);
  printFidelityReport(r, devnull);
  std::fclose(devnull);
}

TEST(FidelityReport, OriginalTimelineEventsStartAtTheIteration) {
  Fixture f;
  nlohmann::json events = originalTimelineTraceEvents(f.original, 2);
  int ops = 0, kernels = 0, meta = 0;
  for (const auto& e : events) {
    EXPECT_EQ(e["pid"], 2);
    if (e["ph"] == "M") {
      ++meta;
      continue;
    }
    (e["cat"] == "cpu_op" ? ops : kernels)++;
    EXPECT_GE(e["ts"].get<double>(), 0.0);
  }
  EXPECT_EQ(ops, 3);
  EXPECT_EQ(kernels, 3);
  EXPECT_EQ(meta, 3);  // process name, CPU thread 42, stream 7
  EXPECT_DOUBLE_EQ(events[1]["ts"].get<double>(), 0.0);
  nlohmann::json linked = linkedTimelineJson(f.original, true);
  EXPECT_EQ(linked["matched_ops"], 3);
  EXPECT_EQ(linked["unmatched_ops"].size(), 1u);
  EXPECT_EQ(linked["ops"].size(), 4u);
}

}  // namespace
}  // namespace tracetwin::cli
