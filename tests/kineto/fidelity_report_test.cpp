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
