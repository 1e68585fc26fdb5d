#include "core/kineto/overheads.h"

#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/kineto/kineto_reader.h"
#include "core/kineto/robust_stats.h"
#include "core/kineto/step_position_keys.h"
#include "core/trace_reader.h"
#include "predictors/host/overheads.h"
#include "tests/support/graphs.h"
#include "tests/support/kineto.h"
#include "tests/support/paths.h"

namespace tracetwin::core::kineto {
namespace {

using testing::cpuOp;
using testing::fakeKineto;
using testing::kernel;
using testing::launch;

// The table as `predict --overheads` reads the file `link` writes of it.
predictors::OverheadTable readBack(const OverheadTable& table) {
  return predictors::OverheadTable::fromJson(nlohmann::json::parse(overheadsToJson(table)),
                                             "o.json");
}

TEST(RobustStats, DropsTukeyOutliers) {
  // q1 = 2, q3 = 4, fences [-1, 7]: 100 goes; the rest {1,2,3,4} has median
  // 2.5 and quartiles 1.75 / 3.25.
  RobustStat s = robustStat({4, 1, 100, 3, 2});
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(s.outliers, 1);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.iqr, 1.5);
  EXPECT_EQ(robustStat({}).count, 0);
  EXPECT_DOUBLE_EQ(robustStat({7}).median, 7);
}

// One thread: aten::mm [0,100] with two kernel launches (and a nested
// aten::t, and a cudaEventQuery that launches nothing), aten::view
// [110,120] with none, aten::mm [130,180] with one launch.
KinetoTrace threeOps() {
  return fakeKineto({
      cpuOp("aten::mm", 1, 0, 100),
      launch("cudaLaunchKernel", 1, 10, 5, 1),
      kernel("k1", 7, 20, 9, 1),
      launch("cudaLaunchKernel", 1, 30, 5, 2),
      kernel("k2", 7, 40, 9, 2),
      launch("cudaEventQuery", 1, 50, 2, 99),
      cpuOp("aten::t", 1, 60, 5),
      cpuOp("aten::view", 1, 110, 10),
      cpuOp("aten::mm", 1, 130, 50),
      launch("cudaLaunchKernel", 1, 140, 6, 3),
      kernel("k3", 7, 150, 9, 3),
  });
}

TEST(Overheads, MeasuresT1ToT5OnAHandBuiltThread) {
  OverheadCollector collector;
  collector.addTrace(threeOps(), defaultOperatorPredicate());
  EXPECT_EQ(collector.topLevelOps(), 3);  // aten::t is nested
  OverheadTable t = collector.finish();
  EXPECT_EQ(t.sources, (std::vector<std::string>{"fake_kineto.json"}));
  // T1: view starts 10 after mm ends, the second mm 10 after view ends.
  EXPECT_DOUBLE_EQ(t.t[0].at("aten::view").median, 10);
  EXPECT_DOUBLE_EQ(t.t[0].at("aten::mm").median, 10);
  EXPECT_EQ(t.t[0].at(kAllKey).count, 2);
  // T2: first launch 10 after the op starts, both times.
  EXPECT_DOUBLE_EQ(t.t[1].at("aten::mm").median, 10);
  EXPECT_EQ(t.t[1].at("aten::mm").count, 2);
  // T3: 100 - 35 = 65 and 180 - 146 = 34: median 49.5.
  EXPECT_DOUBLE_EQ(t.t[2].at("aten::mm").median, 49.5);
  // T4: launches of 5, 5 and 6 us; cudaEventQuery launched nothing.
  EXPECT_DOUBLE_EQ(t.t[3].at("cudaLaunchKernel").median, 5);
  EXPECT_EQ(t.t[3].at("cudaLaunchKernel").count, 3);
  EXPECT_EQ(t.t[3].count("cudaEventQuery"), 0u);
  // T5: one gap of 30 - 15 = 15 inside the first mm; view's whole CPU time.
  EXPECT_DOUBLE_EQ(t.t[4].at("aten::mm").median, 15);
  EXPECT_DOUBLE_EQ(t.t[4].at("aten::view").median, 10);
}

TEST(Overheads, AGapWhileAnotherThreadRunsOpsIsAWaitNotT1) {
  // The main thread blocks in backward() while the autograd thread runs the
  // backward ops; the optimizer's first op then starts long after the last
  // forward op. T1 runs from the latest end of any thread's op: the wait for
  // the other thread is not T1, the hand-overs before and after it are (as
  // the recorded host time counts them, recorded_host_time.h), each keyed by
  // its place in the step (step_position_keys.h), not by the op after it.
  OverheadCollector collector;
  collector.addTrace(fakeKineto({
                         cpuOp("aten::mm", 1, 0, 10), cpuOp("aten::relu", 1, 15, 5),  // T1 5
                         cpuOp("aten::mm", 2, 40, 100),   // backward: T1 40 - 20
                         cpuOp("aten::mm", 2, 143, 5),    // T1 3
                         cpuOp("aten::add_", 1, 160, 5),  // 160 - 148, not 160 - 20
                         cpuOp("aten::mul_", 1, 172, 5),  // T1 7
                     }),
                     defaultOperatorPredicate());
  OverheadTable t = collector.finish();
  EXPECT_EQ(t.t[0].at(kAllKey).count, 5);
  EXPECT_DOUBLE_EQ(t.t[0].at("aten::relu").median, 5);
  EXPECT_DOUBLE_EQ(t.t[0].at(kThreadEntryKey).median, 20);
  EXPECT_DOUBLE_EQ(t.t[0].at("aten::mm").median, 3);
  EXPECT_EQ(t.t[0].at("aten::mm").count, 1);
  EXPECT_DOUBLE_EQ(t.t[0].at(kThreadReturnKey).median, 12);
  EXPECT_EQ(t.t[0].count("aten::add_"), 0u);
  EXPECT_DOUBLE_EQ(t.t[0].at("aten::mul_").median, 7);
}

// A profiled step (ProfilerStep#1 [0, 200]): aten::mm [10, 110] with a nested
// aten::t and one launch [40, 45], aten::view [120, 170] with none. Its
// samples: T1 of mm 10 (the lead-in, 0 records: the step's own span is none),
// T2 30 (mm's and t's records), T4 5 (the launch's), T3 65 (none), T1 of
// view 10, view's whole CPU time 50 (its record): 170 us, 4 records.
KinetoTrace profiledStep() {
  KinetoEvent step = cpuOp("ProfilerStep#1", 1, 0, 200);
  step.category = EventCategory::kUserAnnotation;
  return fakeKineto({step, cpuOp("aten::mm", 1, 10, 100), cpuOp("aten::t", 1, 20, 10),
                     launch("cudaLaunchKernel", 1, 40, 5, 1), kernel("k", 7, 50, 9, 1),
                     cpuOp("aten::view", 1, 120, 50)});
}

TEST(Overheads, TheProfilersCostComesOffLikeTheRecordedHostTime) {
  // Unprofiled host span 130: (170 - 130) / 4 = 10 us per record, which
  // takes T4's 5 to 0 (floored); 135 is left, so x130/135 on the rest.
  OverheadCollector collector;
  collector.addTrace(profiledStep(), defaultOperatorPredicate(), 130);
  EXPECT_DOUBLE_EQ(collector.lastCorrection().per_event_us, 10);
  EXPECT_DOUBLE_EQ(collector.lastCorrection().scale, 130.0 / 135.0);
  const OverheadTable t = collector.finish();
  const double k = 130.0 / 135.0;
  EXPECT_DOUBLE_EQ(t.t[0].at(kStepStartKey).median, 10 * k);  // the lead-in: no record inside
  EXPECT_DOUBLE_EQ(t.t[1].at("aten::mm").median, (30 - 20) * k);
  EXPECT_DOUBLE_EQ(t.t[3].at("cudaLaunchKernel").median, 0);
  EXPECT_DOUBLE_EQ(t.t[2].at("aten::mm").median, 65 * k);
  EXPECT_DOUBLE_EQ(t.t[0].at("aten::view").median, 10 * k);
  EXPECT_DOUBLE_EQ(t.t[4].at("aten::view").median, (50 - 10) * k);
  double sum = 0;
  for (int i = 0; i < 5; ++i)
    for (const auto& [key, stat] : t.t[i])
      if (key != kAllKey) sum += stat.median * double(stat.count);
  EXPECT_NEAR(sum, 130, 1e-9);  // the samples describe the unprofiled step

  // The file says to charge the means; the uncorrected tables below do not.
  EXPECT_TRUE(t.charge_mean);
  EXPECT_TRUE(readBack(t).charge_mean);
  // No unprofiled span, or one at least as long as the samples: as recorded.
  for (double target : {0.0, 170.0, 400.0}) {
    OverheadCollector plain;
    plain.addTrace(profiledStep(), defaultOperatorPredicate(), target);
    const OverheadTable p = plain.finish();
    EXPECT_DOUBLE_EQ(p.t[1].at("aten::mm").median, 30) << target;
    EXPECT_DOUBLE_EQ(p.t[3].at("cudaLaunchKernel").median, 5) << target;
    EXPECT_DOUBLE_EQ(p.t[4].at("aten::view").median, 50) << target;
    EXPECT_FALSE(p.charge_mean) << target;
    EXPECT_EQ(overheadsToJson(p).find("statistic"), std::string::npos) << target;
  }
}

TEST(Overheads, ATraceWithoutAnUnprofiledSpanBorrowsTheCorrectedTracesCostPerRecord) {
  // The corrected step takes 10 us off per record (test above); the second
  // copy has no unprofiled span (its kernels fill the step) and borrows it
  // at finish(): mm's T2 of 30 with 2 records inside is 10 in both, where the
  // first also has the x130/135 scale.
  OverheadCollector collector;
  collector.addTrace(profiledStep(), defaultOperatorPredicate(), 130);
  collector.addTrace(profiledStep(), defaultOperatorPredicate(), 0,
                     OverheadCollector::Correction::kBorrow);
  EXPECT_EQ(collector.borrowingTraces(), 1);
  EXPECT_DOUBLE_EQ(collector.borrowedPerRecordUs(), 10);
  const OverheadTable t = collector.finish();
  const RobustStat& t2 = t.t[1].at("aten::mm");
  EXPECT_EQ(t2.count, 2);
  EXPECT_DOUBLE_EQ(t2.median, (10 * 130.0 / 135.0 + 10) / 2);
  EXPECT_DOUBLE_EQ(t.t[4].at("aten::view").median, (40 * 130.0 / 135.0 + 40) / 2)
      << "view's 50 less its record";

  // With no corrected trace to borrow from, the samples stay as recorded.
  OverheadCollector alone;
  alone.addTrace(profiledStep(), defaultOperatorPredicate(), 0,
                 OverheadCollector::Correction::kBorrow);
  EXPECT_DOUBLE_EQ(alone.borrowedPerRecordUs(), 0);
  EXPECT_DOUBLE_EQ(alone.finish().t[1].at("aten::mm").median, 30);
}
TEST(Overheads, ADeviceBoundTracesCorrectionIsAFloorTheBorrowedCostMayRaise) {
  using Correction = OverheadCollector::Correction;
  // The corrected step takes 10 us off per record. A device-bound copy whose
  // step allows a host span of up to 165 us takes (170 - 165) / 4 = 1.25 us
  // off its own records; the borrowed 10 us leaves 135 us, less, and wins:
  // its samples are the borrowing copy's of the test above.
  OverheadCollector collector;
  collector.addTrace(profiledStep(), defaultOperatorPredicate(), 130);
  collector.addTrace(profiledStep(), defaultOperatorPredicate(), 165, Correction::kToSpanAtMost);
  EXPECT_DOUBLE_EQ(collector.lastCorrection().per_event_us, 1.25);
  EXPECT_EQ(collector.atMostTracesBorrowing(), 1);
  EXPECT_EQ(collector.borrowingTraces(), 0);
  EXPECT_DOUBLE_EQ(collector.borrowedPerRecordUs(), 10);
  OverheadTable t = collector.finish();
  EXPECT_DOUBLE_EQ(t.t[1].at("aten::mm").median, (10 * 130.0 / 135.0 + 10) / 2);
  EXPECT_DOUBLE_EQ(t.t[4].at("aten::view").median, (40 * 130.0 / 135.0 + 40) / 2);

  // A span of 100 us takes 17.5 us off per record (117.5 left, x100/117.5):
  // less host time than the borrowed cost leaves, so it stays.
  OverheadCollector tighter;
  tighter.addTrace(profiledStep(), defaultOperatorPredicate(), 130);
  tighter.addTrace(profiledStep(), defaultOperatorPredicate(), 100, Correction::kToSpanAtMost);
  EXPECT_EQ(tighter.atMostTracesBorrowing(), 0);
  t = tighter.finish();
  EXPECT_DOUBLE_EQ(t.t[4].at("aten::view").median,
                   (40 * 130.0 / 135.0 + (50 - 17.5) * 100 / 117.5) / 2);

  // Alone, with nothing to borrow, it keeps its own correction, and its
  // table is charged by the mean like any corrected one.
  OverheadCollector alone;
  alone.addTrace(profiledStep(), defaultOperatorPredicate(), 165, Correction::kToSpanAtMost);
  EXPECT_EQ(alone.atMostTracesBorrowing(), 0);
  t = alone.finish();
  EXPECT_TRUE(t.charge_mean);
  EXPECT_DOUBLE_EQ(t.t[4].at("aten::view").median, 50 - 1.25);  // 165 left: no scale
}

TEST(Overheads, BlockingInASyncIsNotCpuOverhead) {
  // aten::to copies to the host and waits 600 us in cudaStreamSynchronize
  // for its stream (on a rank of a job: for its peers' collective); item
  // launches nothing and waits 300 us.
  OverheadCollector collector;
  collector.addTrace(fakeKineto({
                         cpuOp("aten::to", 1, 0, 650),
                         launch("cudaMemcpyAsync", 1, 10, 5, 1),
                         kernel("memcpy", 7, 15, 2, 1),
                         launch("cudaStreamSynchronize", 1, 20, 600, 90),
                         cpuOp("aten::item", 1, 660, 320),
                         launch("cudaStreamSynchronize", 1, 670, 300, 91),
                     }),
                     defaultOperatorPredicate());
  const OverheadTable t = collector.finish();
  EXPECT_DOUBLE_EQ(t.t[2].at("aten::to").median, 650 - 15 - 600);  // T3 without the wait
  EXPECT_DOUBLE_EQ(t.t[4].at("aten::item").median, 20);            // T5 without the wait
}

TEST(RobustStats, TheMeanKeepsTheOutliers) {
  // A step sums its gaps: ten of 2 us and one of 1,000 us (Python work
  // between two ops) sum to 1,020 us; the median charges 22.
  std::vector<double> gaps(10, 2.0);
  gaps.push_back(1000);
  const RobustStat s = robustStat(gaps);
  EXPECT_DOUBLE_EQ(s.median, 2);
  EXPECT_DOUBLE_EQ(s.mean * 11, 1020);
  OverheadTable table;
  table.t[0]["aten::add_"] = s;
  EXPECT_DOUBLE_EQ(readBack(table).t[0].at("aten::add_").mean_us, s.mean);
}

TEST(Overheads, JsonRoundTripKeepsTheFormat) {
  OverheadCollector collector;
  collector.addTrace(threeOps(), defaultOperatorPredicate());
  std::string json = overheadsToJson(collector.finish());
  EXPECT_NE(json.find("\"format\": \"tracetwin-overheads/1\""), std::string::npos);
  const predictors::OverheadTable back =
      predictors::OverheadTable::fromJson(nlohmann::json::parse(json), "o.json");
  EXPECT_DOUBLE_EQ(back.t[2].at("aten::mm").median_us, 49.5);
  EXPECT_EQ(back.t[3].at("cudaLaunchKernel").count, 3);
  EXPECT_EQ(back.sources.size(), 1u);
}

TEST(Overheads, DataLoadingIsARegionOfItsOwnNotOpsOrT1) {
  // The selection drops what runs under a DataLoader label; its span is the
  // step's time all the same: a "regions" sample, and the op after it has
  // only the gaps outside it as T1 (10 before the label, 10 after it).
  const std::string name = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
  KinetoEvent loader = cpuOp(name, 1, 110, 300);
  loader.category = EventCategory::kUserAnnotation;
  OverheadCollector collector;
  collector.addTrace(fakeKineto({cpuOp("aten::mm", 1, 0, 100), loader,
                                 cpuOp("aten::ones", 1, 120, 10), cpuOp("aten::fill_", 1, 140, 10),
                                 cpuOp("aten::view", 1, 420, 10)}),
                     defaultOperatorPredicate());
  EXPECT_EQ(collector.topLevelOps(), 2);  // mm and view: the loader's ops are not the step's
  const OverheadTable t = collector.finish();
  EXPECT_DOUBLE_EQ(t.t[0].at("aten::view").median, 20);
  EXPECT_EQ(t.t[0].count("aten::fill_"), 0u);
  EXPECT_EQ(t.t[4].count("aten::ones"), 0u);
  ASSERT_EQ(t.regions.count(name), 1u);
  EXPECT_DOUBLE_EQ(t.regions.at(name).median, 300);
  EXPECT_DOUBLE_EQ(readBack(t).regions.at(name).mean_us, 300);
  // A table without regions writes none (files of earlier sessions read the same).
  EXPECT_EQ(overheadsToJson(OverheadCollector().finish()).find("regions"), std::string::npos);
}

// All 8 DLRM ranks together (V100, PyTorch 2.x era): every table is filled,
// and the launch call itself takes a few microseconds. Lin et al. measured
// single-digit-microsecond launch overheads on V100 as well; the range here
// is a sanity bound, the measured value is in docs/kineto.md.
TEST(Overheads, DlrmRanksGivePlausibleLaunchOverheads) {
  OverheadCollector collector;
  for (int r = 0; r < 8; ++r) {
    std::string stem = testing::sharedTrace("dlrm_8rank/rank" + std::to_string(r));
    Graph graph = readTrace(stem + ".et.json.gz");
    collector.addTrace(readKinetoTrace(stem + ".kineto.json.gz"), operatorsOfGraph(graph));
  }
  OverheadTable t = collector.finish();
  EXPECT_EQ(t.sources.size(), 8u);
  for (int i = 0; i < 5; ++i) EXPECT_GT(t.t[i].at(kAllKey).count, 0) << "T" << i + 1;
  const RobustStat& launch = t.t[3].at("cudaLaunchKernel");
  EXPECT_GT(launch.count, 1000);
  EXPECT_GT(launch.median, 1.0);
  EXPECT_LT(launch.median, 50.0);
}

}  // namespace
}  // namespace tracetwin::core::kineto
