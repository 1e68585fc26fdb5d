#include "calibration/spaced_units.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

#include "calibration/calibrator.h"
#include "calibration/graph_builder.h"
#include "replay/replayer.h"
#include "tests/calibration/toy_seams.h"
#include "tests/support/values.h"

namespace tracetwin::calibration {
namespace {

using testing::kMiB;

// An in-place add_ on two float tensors of `numel` elements each.
MicrobenchCase addCase(int64_t numel) {
  return repeatedCase(GridOptions{}, "elementwise", "add_ numel=" + std::to_string(numel), 10.0,
                      [numel](GraphBuilder& b) {
                        auto self = b.tensor({numel});
                        b.op(
                            "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar "
                            "alpha=1) -> Tensor(a!)",
                            {self, b.tensor({numel}), GraphBuilder::intValue(1)}, {self});
                      });
}

// An out-of-place add of two float tensors of `numel` elements each.
MicrobenchCase addOutOfPlaceCase(int64_t numel) {
  return repeatedCase(GridOptions{}, "elementwise", "add numel=" + std::to_string(numel), 10.0,
                      [numel](GraphBuilder& b) {
                        b.op(
                            "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> "
                            "Tensor",
                            {b.tensor({numel}), b.tensor({numel}), GraphBuilder::intValue(1)},
                            {b.tensor({numel})});
                      });
}

TEST(SpacedUnits, CaseTrafficCountsEachInputOnceAndSaysWhetherItWritesInPlace) {
  const CaseTraffic in_place = caseTraffic(addCase(1000));
  EXPECT_EQ(in_place.input_bytes, 2 * 4000.0);  // self and other; the output is self
  EXPECT_TRUE(in_place.in_place);
  const CaseTraffic out = caseTraffic(addOutOfPlaceCase(1000));
  EXPECT_EQ(out.input_bytes, 2 * 4000.0);
  EXPECT_FALSE(out.in_place);
  MicrobenchCase alone = addCase(1000);
  alone.add_copy = nullptr;  // runs on its own only: not spaced
  EXPECT_EQ(caseTraffic(alone).input_bytes, 0.0);
}

TEST(SpacedUnits, TakeCasesPastL2OfBothKindsSpreadFromSmallestToLargest) {
  // Inputs of 8 KiB .. 64 MiB, in place and not: the 256 KiB .. 16 MiB ones
  // qualify (7 of each kind).
  std::vector<MicrobenchCase> cases;
  for (int64_t numel = 1024; numel <= 8 * kMiB; numel *= 2) {
    cases.push_back(addCase(numel));
    cases.push_back(addOutOfPlaceCase(numel));
  }
  const std::vector<ReplayUnit> units = spacedUnits(cases);
  const size_t distances = std::size(kSpacedMiB);
  ASSERT_EQ(units.size(), 2 * kSpacedCases * distances);
  std::set<std::string> labels;
  for (size_t i = 0; i < units.size(); ++i) {
    const ReplayUnit& u = units[i];
    ASSERT_EQ(u.cases.size(), 1u);
    EXPECT_EQ(u.spaced_bytes, kSpacedMiB[i % distances] * kMiB);
    EXPECT_EQ(u.flush_bytes, 0);
    // At least the stream at ~10 GB/s, every round.
    EXPECT_GT(u.est_us, kRounds * static_cast<double>(u.spaced_bytes) / 1e4);
    const double bytes = caseTraffic(u.cases[0]).input_bytes;
    EXPECT_GE(bytes, kSpacedMinInputBytes) << u.cases[0].label;
    EXPECT_LE(bytes, kSpacedMaxInputBytes) << u.cases[0].label;
    labels.insert(u.cases[0].label);
  }
  EXPECT_EQ(labels.size(), 2 * kSpacedCases);
  for (const char* label : {"add_ numel=32768", "add numel=32768", "add_ numel=2097152",
                            "add numel=2097152"})  // 256 KiB and 16 MiB of inputs
    EXPECT_TRUE(labels.count(label)) << label;
  EXPECT_TRUE(spacedUnits({addCase(1024)}).empty());
  EXPECT_TRUE(spacedFamily("norm"));
  EXPECT_FALSE(spacedFamily("gemm"));
}

// On the toy host (tests/support/toy_host.h): which rows come out is the
// unit's logic, not the host's.
TEST(SpacedUnits, AReplayGivesRowsAtTheirDistanceOnly) {
  ReplayUnit u;
  u.cases = {addCase(64 * 1024)};  // 512 KiB of inputs
  u.spaced_bytes = 4 * kMiB;
  u.est_us = 1000;
  CalibrationOptions o;
  o.seams = testing::toySeams(std::make_shared<testing::ToyHost>());
  const CaseOutcome out = runCase(u, o, "host-cpu");
  ASSERT_TRUE(out.failure.empty()) << out.failure;
  // One row: the copy after the stream, not the one before it.
  ASSERT_EQ(out.rows.size(), 1u);
  const DatasetRow& r = out.rows[0];
  EXPECT_EQ(r.case_label, "add_ numel=65536 [spaced 4 MiB]");
  EXPECT_TRUE(r.sample.spaced);
  EXPECT_GT(r.sample.measured_us, 0);
  // The stream and half of the op's own inputs since their last touch.
  EXPECT_GE(r.sample.reuse_bytes, 4.0 * kMiB);
  EXPECT_LT(r.sample.reuse_bytes, 5.0 * kMiB);
}

}  // namespace
}  // namespace tracetwin::calibration
