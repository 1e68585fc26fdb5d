// `tracetwin replay` on compiled steps, end to end on this CPU host: the
// shared PT2 trace with a Kineto trace of its kernel (mode 2, reported in the
// terminal and the JSON), and a compiled step whose trace lacks Inductor's
// kernels (captured without the profiler): warned about, and counted against
// coverage from the kernels the Kineto trace saw in its compiled region.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/paths.h"
#include "tests/support/run.h"
#include "tests/support/traces.h"

namespace {

using tracetwin::testing::modernNode;
using tracetwin::testing::modernTrace;
using tracetwin::testing::TempDir;

using tracetwin::testing::CommandRun;
using tracetwin::testing::runTracetwin;

// The process that wrote the ET (the linker refuses a profiler trace of
// another); each trace builder below sets it first.
int64_t event_pid = 0;

std::string event(const char* cat, const std::string& name, int64_t tid, double ts, double dur,
                  const std::string& args) {
  return fmt::format(
      R"({{"ph": "X", "cat": "{}", "name": "{}", "pid": {}, "tid": {}, "ts": {}, "dur": {}, "args": {{{}}}}})",
      cat, name, event_pid, tid, ts, dur, args);
}

// Iteration 5 of the shared PT2 trace (rf ids 1..9) as the profiler saw it:
// the Triton kernel ran 123.5 us on stream 7.
std::string pt2Kineto() {
  event_pid = 793657;  // the shared PT2 trace's
  return "{\"schemaVersion\": 1, \"traceEvents\": [\n" +
         event("user_annotation", "ProfilerStep#5", 200, 1000, 500,
               R"("External id": 1, "Record function id": 1)") +
         ",\n" +
         event("cpu_op", "CompiledFunction", 200, 1020, 300,
               R"("External id": 3, "Record function id": 7)") +
         ",\n" +
         event("cpu_op", "aten::mm", 200, 1030, 20,
               R"("External id": 4, "Record function id": 8)") +
         ",\n" + event("cuda_runtime", "cudaLaunchKernel", 200, 1035, 5, R"("correlation": 76)") +
         ",\n" + event("kernel", "gemm", 7, 1040, 10, R"("correlation": 76, "stream": 7)") + ",\n" +
         event("cpu_op", "triton_poi_fused_add_cos_neg_sin_0", 200, 1060, 12,
               R"("External id": 5, "Record function id": 9)") +
         ",\n" + event("cuda_driver", "cuLaunchKernel", 200, 1062, 6, R"("correlation": 77)") +
         ",\n" +
         event("kernel", "triton_poi_fused_add_cos_neg_sin_0", 7, 1070, 123.5,
               R"("correlation": 77, "stream": 7)") +
         "]}";
}

TEST(CompiledReplayCommand, AKernelWithoutTheCacheStandsInForItsRecordedTime) {
  if (!tracetwin::testing::replayHelperBuilt()) GTEST_SKIP() << "replay is not in this build";
  TempDir dir;
  const std::string kineto = dir.write("pt2.kineto.json", pt2Kineto());
  const std::string json = dir.path() + "/replay.json";
  const CommandRun run =
      runTracetwin("replay " + tracetwin::testing::sharedTrace("pt2_triton_1.1.1_et.json.gz") +
                   " --device cpu --warmup 0 --iters 2 --kineto " + kineto + " --json-out " + json);
  ASSERT_EQ(run.exit_code, 0) << run.output();
  EXPECT_NE(run.output().find("stood in for, recorded kernel time (mode 2): 1 (123.5 us"),
            std::string::npos)
      << run.output();
  std::ifstream in(json);
  const auto doc = nlohmann::json::parse(in);
  const auto& c = doc.at("compiled");
  EXPECT_EQ(c.at("kernels"), 1);
  EXPECT_EQ(c.at("launched_from_cache"), 0);
  EXPECT_EQ(c.at("stood_in_recorded"), 1);
  EXPECT_DOUBLE_EQ(c.at("stood_in_recorded_us").get<double>(), 123.5);
  EXPECT_DOUBLE_EQ(doc.at("coverage").get<double>(), 0.5);  // the stand-in is not replayed
  ASSERT_EQ(doc.at("placeholders").size(), 1u);
  EXPECT_EQ(doc["placeholders"][0].at("source"), "recorded");
}

// A compiled region captured without the profiler: its ATen call is in the
// trace, its Inductor kernel only in the Kineto trace.
TEST(CompiledReplayCommand, KernelsTheTraceDidNotRecordAreWarnedAboutAndCounted) {
  if (!tracetwin::testing::replayHelperBuilt()) GTEST_SKIP() << "replay is not in this build";
  const char* kMm = "aten::mm(Tensor self, Tensor mat2) -> Tensor";
  const char* kRelu = "aten::relu(Tensor self) -> Tensor";
  const std::string mat = R"([[41,5,0,16,4,"cpu"],[42,6,0,16,4,"cpu"]])";
  const std::string et =
      modernTrace(modernNode(10, 2, "Torch-Compiled Region: 0/0", "") + ",\n" +
                      modernNode(11, 10, "CompiledFunction", "") + ",\n" +
                      modernNode(12, 11, "aten::mm", kMm, mat, "[[4,4],[4,4]]",
                                 R"j(["Tensor(float)","Tensor(float)"])j") +
                      ",\n" +
                      modernNode(13, 2, "aten::relu", kRelu, R"([[43,7,0,16,4,"cpu"]])", "[[16]]",
                                 R"j(["Tensor(float)"])j"),
                  "1.1.1-chakra.0.0.4");
  event_pid = 7;  // modernTrace's
  const std::string kineto =
      "{\"schemaVersion\": 1, \"traceEvents\": [\n" +
      event("cpu_op", "CompiledFunction", 200, 1010, 300,
            R"("External id": 2, "Record function id": 11)") +
      ",\n" +
      event("cpu_op", "aten::mm", 200, 1020, 20, R"("External id": 3, "Record function id": 12)") +
      ",\n" +
      event("cpu_op", "triton_poi_fused_relu_0", 200, 1100, 12,
            R"("External id": 4, "Record function id": 50)") +
      ",\n" + event("cuda_driver", "cuLaunchKernel", 200, 1102, 6, R"("correlation": 77)") + ",\n" +
      event("kernel", "triton_poi_fused_relu_0", 7, 1110, 124,
            R"("correlation": 77, "stream": 7)") +
      ",\n" +
      event("cpu_op", "aten::relu", 200, 1500, 10,
            R"("External id": 5, "Record function id": 13)") +
      "]}";
  TempDir dir;
  const std::string trace = dir.write("step.et.json", et);
  const std::string kineto_path = dir.write("step.kineto.json", kineto);
  const std::string json = dir.path() + "/replay.json";
  const CommandRun run = runTracetwin("replay " + trace + " --warmup 0 --iters 1 --kineto " +
                                      kineto_path + " --json-out " + json);
  ASSERT_EQ(run.exit_code, 0) << run.output();
  EXPECT_NE(run.output().find("not one Inductor kernel"), std::string::npos) << run.output();
  EXPECT_NE(run.output().find("the original ran 1 kernels (0.124 ms) in compiled regions that the "
                            "trace did not record; counting them, coverage is 66.67%"),
            std::string::npos)
      << run.output();
  std::ifstream in(json);
  const auto doc = nlohmann::json::parse(in);
  EXPECT_DOUBLE_EQ(doc.at("coverage").get<double>(), 1.0);  // of what the trace selected
  EXPECT_EQ(doc.at("compiled").at("unrecorded_kernels"), 1);
  EXPECT_NEAR(doc["compiled"].at("coverage_counting_unrecorded").get<double>(), 2.0 / 3.0, 1e-12);
  EXPECT_EQ(doc["compiled"].at("regions_without_kernels"), 1);
}

}  // namespace
