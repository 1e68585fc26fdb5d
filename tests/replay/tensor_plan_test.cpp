// Tensor identities with reused ids, release points, and the trace's peak.
#include "replay/tensor_plan.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/errors.h"
#include "replay/trace_meta.h"
#include "tests/support/graphs.h"
#include "tests/support/paths.h"
#include "tests/support/traces.h"

namespace tracetwin::replay {
namespace {

using testing::tensorValue;

TEST(TensorPlan, ReusedIdsAfterRedefinitionSeeTheNewTensor) {
  TensorPlan plan;
  auto a = tensorValue(7, 70, {4});
  const int32_t weights = plan.useInput(a.tensor, 0);
  EXPECT_EQ(plan.useInput(a.tensor, 1), weights) << "same key, same slot";
  const int32_t produced = plan.defineOutput(a.tensor, 2);  // in-place result, same identity
  EXPECT_NE(produced, weights);
  EXPECT_EQ(plan.useInput(a.tensor, 3), produced);
  auto other_shape = tensorValue(7, 70, {2, 2});
  EXPECT_NE(plan.useInput(other_shape.tensor, 4), produced) << "shape is part of the key";
  EXPECT_TRUE(plan.slots()[size_t(weights)].upfront);
  EXPECT_FALSE(plan.slots()[size_t(produced)].upfront);
  auto releases = plan.releaseLists(5);
  EXPECT_EQ(releases[3], std::vector<int32_t>{produced}) << "released after its last use";
  EXPECT_TRUE(releases[1].empty()) << "upfront tensors live through the iteration";
}

// x.add_(1) in Python records a fresh 0-dim long tensor per call: those are
// created right before each op that reads them. A 0-dim tensor that another
// upfront view of its storage is in use beside, a produced one, a 1-element
// vector and a GPU scalar stay as they were.
TEST(TensorPlan, WrappedNumbersAreTransientAtEachRead) {
  TensorPlan plan;
  const int32_t wrapped0 = plan.useInput(tensorValue(5, 6, {}).tensor, 0);
  const int32_t wrapped1 = plan.useInput(tensorValue(5, 14, {}).tensor, 1);
  // One key read by ops 1 and 3: two wrapped numbers at one address.
  const int32_t reused = plan.useInput(tensorValue(8, 9, {}).tensor, 1);
  plan.useInput(tensorValue(8, 9, {}).tensor, 3);
  auto shared = tensorValue(10, 11, {}), sibling = tensorValue(12, 11, {});
  sibling.tensor->offset = 1;
  plan.useInput(sibling.tensor, 1);
  const int32_t shares_storage = plan.useInput(shared.tensor, 2);
  plan.useInput(sibling.tensor, 3);  // the sibling is in use over ops 1-3
  const int32_t vector = plan.useInput(tensorValue(20, 21, {1}).tensor, 3);
  const int32_t produced = plan.defineOutput(tensorValue(30, 31, {}).tensor, 3);
  plan.useInput(tensorValue(30, 31, {}).tensor, 4);
  auto on_gpu = tensorValue(40, 41, {});
  on_gpu.tensor->device = "cuda:0";
  const int32_t gpu = plan.useInput(on_gpu.tensor, 4);
  plan.markTransients();
  const auto& slots = plan.slots();
  EXPECT_TRUE(slots[size_t(wrapped0)].transient);
  EXPECT_TRUE(slots[size_t(wrapped1)].transient);
  EXPECT_TRUE(slots[size_t(reused)].transient);
  EXPECT_EQ(slots[size_t(reused)].scalar_reads, (std::vector<int64_t>{1, 3}));
  for (int32_t s : {shares_storage, vector, produced, gpu})
    EXPECT_FALSE(slots[size_t(s)].transient) << "slot " << s;
  const auto releases = plan.releaseLists(5);
  EXPECT_EQ(releases[0], std::vector<int32_t>{wrapped0}) << "released after its op";
  EXPECT_EQ(releases[1], (std::vector<int32_t>{wrapped1, reused}));
  EXPECT_EQ(releases[3], std::vector<int32_t>{reused}) << "and after each read";
  EXPECT_EQ(releases[4], std::vector<int32_t>{produced});
}

// Wrapped numbers at one address, one after the other: each is transient,
// since none is in use when another is read.
TEST(TensorPlan, ScalarsTakingTurnsAtOneAddressAreEachTransient) {
  TensorPlan plan;
  const int32_t beta = plan.useInput(tensorValue(94, 7, {}, "double", 8).tensor, 1);
  const int32_t one = plan.useInput(tensorValue(306, 7, {}, "double", 8).tensor, 2);
  plan.useInput(tensorValue(94, 7, {}, "double", 8).tensor, 3);
  plan.markTransients();
  EXPECT_TRUE(plan.slots()[size_t(beta)].transient);
  EXPECT_TRUE(plan.slots()[size_t(one)].transient);
}

// AdamW's `step += 1` wraps a long; the bias correction wrapped later at the
// same address is a double with the same id and size: two tensors.
TEST(TensorPlan, TheDtypeIsPartOfTheKey) {
  TensorPlan plan;
  const int32_t step = plan.useInput(tensorValue(239, 3012, {}, "long", 8).tensor, 0);
  const int32_t correction = plan.useInput(tensorValue(239, 3012, {}, "double", 8).tensor, 1);
  EXPECT_NE(step, correction);
}

TEST(TensorPlan, ExtentCoversStridedViews) {
  auto t = tensorValue(1, 1, {4, 3});
  t.tensor->strides = {1, 4};  // a transpose of a 3x4 tensor: same 12 elements
  EXPECT_EQ(TensorPlan::extentElements(t.tensor), 12);
  t.tensor->offset = 5;
  EXPECT_EQ(TensorPlan::extentElements(t.tensor), 17);
  auto expanded = tensorValue(2, 2, {8, 16});
  expanded.tensor->strides = {0, 1};  // expand of a 16-element row
  EXPECT_EQ(TensorPlan::extentElements(expanded.tensor), 128) << "numel bounds it from above";
}

TEST(TensorPlan, TracePeakCountsSharedStoragesOnceAndFreesAfterLastUse) {
  // op0: w(400 B) -> a(4000 B); op1: a -> b(4000 B); op2: b -> c, a view of b.
  std::vector<core::Value> in0{tensorValue(1, 1, {100})}, out0{tensorValue(2, 2, {1000})};
  std::vector<core::Value> in1{tensorValue(2, 2, {1000})}, out1{tensorValue(3, 3, {1000})};
  std::vector<core::Value> in2{tensorValue(3, 3, {1000})}, out2{tensorValue(4, 3, {10, 100})};
  const int64_t peak = tracePeakBytes({&in0, &in1, &in2}, {&out0, &out1, &out2});
  EXPECT_EQ(peak, 400 + 4000 + 4000) << "a and b overlap at op1; c shares b's storage";
}

TEST(TraceMeta, MetaPathDropsTheWholeTraceSuffix) {
  EXPECT_EQ(metaPathForTrace("data/mlp.et.json.gz"), "data/mlp.meta.json");
  EXPECT_EQ(metaPathForTrace("x/y.json"), "x/y.meta.json");
  EXPECT_FALSE(readTraceMeta("/nonexistent/z.et.json.gz"));
}

TEST(TraceMeta, ReadsTheRecordedHostAndRejectsAMalformedOne) {
  testing::TempDir dir;
  const std::string trace = dir.path() + "/w.et.json.gz";
  auto write = [&](const std::string& text) { std::ofstream(dir.path() + "/w.meta.json") << text; };
  write(R"({"iteration_ms": 3.5, "host": {"cpu_model": "AMD EPYC", "cpu_family": 26,
            "cpu_model_number": 2, "clock_mhz": 2596.1, "logical_cpus": 2,
            "caches": [{"level": "L1", "bytes": 49152}, {"level": "L3", "bytes": 33554432}]}})");
  auto meta = readTraceMeta(trace);
  ASSERT_TRUE(meta && meta->host);
  EXPECT_EQ(meta->host->cpu_family, 26);
  EXPECT_EQ(meta->host->cpu_model_number, 2);
  EXPECT_DOUBLE_EQ(meta->host->clock_mhz, 2596.1);
  ASSERT_EQ(meta->host->caches.size(), 2u);
  EXPECT_EQ(meta->host->caches[1], (std::pair<std::string, int64_t>{"L3", 33554432}));

  // Keys an older capture.py did not write stay unknown; null is unknown too.
  write(R"({"iteration_ms": 3.5, "host": {"cpu_model": "AMD EPYC", "cpu_family": null}})");
  meta = readTraceMeta(trace);
  ASSERT_TRUE(meta && meta->host);
  EXPECT_EQ(meta->host->cpu_family, -1);
  EXPECT_TRUE(meta->host->caches.empty());

  for (const char* bad :
       {R"({"host": [1]})", R"({"host": {"cpu_family": "26"}})",
        R"({"host": {"caches": {"L1": 1}}})", R"({"host": {"caches": [{"level": "L1"}]}})"}) {
    write(bad);
    try {
      readTraceMeta(trace);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("w.meta.json"), std::string::npos) << e.what();
    }
  }
}

TEST(TraceMeta, ReadsTheCaptureScriptsMetaFile) {
  auto meta = readTraceMeta(tracetwin::testing::dataPath("mlp.et.json.gz"));
  if (!meta) GTEST_SKIP() << "data/mlp.meta.json not captured yet (scripts/make-data.sh)";
  EXPECT_GT(meta->iteration_ms, 0.0);
  EXPECT_GE(meta->threads, 1);
}

}  // namespace
}  // namespace tracetwin::replay
