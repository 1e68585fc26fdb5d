#include "core/kineto/sequence_alignment.h"

#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "core/errors.h"

namespace tracetwin::core::kineto {
namespace {

std::vector<AlignItem> items(const std::vector<std::string>& names, std::vector<int64_t> seq = {}) {
  static std::deque<std::string> storage;  // stable: keeps the string_views alive
  std::vector<AlignItem> out;
  for (size_t i = 0; i < names.size(); ++i) {
    storage.push_back(names[i]);
    out.push_back({storage.back(), i < seq.size() ? seq[i] : -1});
  }
  return out;
}

std::vector<int64_t> align(const std::vector<AlignItem>& a, const std::vector<AlignItem>& b) {
  return alignSequences(a, b, AlignmentOptions{}, "test");
}

TEST(SequenceAlignment, IdenticalSequencesPairOneToOne) {
  auto a = items({"mm", "relu", "mm", "add"});
  EXPECT_EQ(align(a, a), (std::vector<int64_t>{0, 1, 2, 3}));
}

TEST(SequenceAlignment, OpMissingOnKinetoSideDoesNotShiftTheRest) {
  // A naive zip would pair relu with add and everything after it wrongly.
  auto et = items({"mm", "relu", "mm", "add", "sum"});
  auto kineto = items({"mm", "mm", "add", "sum"});
  EXPECT_EQ(align(et, kineto), (std::vector<int64_t>{0, -1, 1, 2, 3}));
}

TEST(SequenceAlignment, ExtraOpsOnKinetoSideAreSkipped) {
  auto et = items({"mm", "relu", "add"});
  auto kineto = items({"ProfilerStep#3", "mm", "empty", "relu", "copy_", "add", "zero_"});
  EXPECT_EQ(align(et, kineto), (std::vector<int64_t>{1, 3, 5}));
}

TEST(SequenceAlignment, MissingAndExtraTogether) {
  auto et = items({"a", "b", "c", "d", "e", "f"});
  auto kineto = items({"a", "x", "c", "d", "y", "f", "z"});
  EXPECT_EQ(align(et, kineto), (std::vector<int64_t>{0, -1, 2, 3, -1, 5}));
}

TEST(SequenceAlignment, RepeatedIterationsAreNotInterleaved) {
  // Kineto holds three iterations of "mm relu add"; the ET's iteration lacks
  // relu. The pairs must stay inside one iteration, not hop across.
  auto et = items({"mm", "add"});
  auto kineto = items({"mm", "relu", "add", "mm", "relu", "add", "mm", "relu", "add"});
  auto p = align(et, kineto);
  ASSERT_GE(p[0], 0);
  EXPECT_EQ(p[1], p[0] + 2);
}

TEST(SequenceAlignment, SequenceNumbersPickTheRightIteration) {
  auto et = items({"mm", "relu", "add"}, {21, 22, -1});
  auto kineto = items({"mm", "relu", "add", "mm", "relu", "add", "mm", "relu", "add"},
                      {11, 12, -1, 21, 22, -1, 31, 32, -1});
  EXPECT_EQ(align(et, kineto), (std::vector<int64_t>{3, 4, 5}));
}

TEST(SequenceAlignment, ContradictingSequenceNumbersNeverPair) {
  EXPECT_FALSE(compatible({"mm", 3}, {"mm", 4}));
  EXPECT_TRUE(compatible({"mm", 3}, {"mm", -1}));
  EXPECT_TRUE(compatible({"mm", -1}, {"mm", 4}));
  EXPECT_FALSE(compatible({"mm", -1}, {"add", -1}));
  auto et = items({"mm"}, {5});
  auto kineto = items({"mm"}, {6});
  EXPECT_EQ(align(et, kineto), (std::vector<int64_t>{-1}));
}

TEST(SequenceAlignment, EmptyInputs) {
  EXPECT_EQ(align({}, items({"a"})), (std::vector<int64_t>{}));
  EXPECT_EQ(align(items({"a", "b"}), {}), (std::vector<int64_t>{-1, -1}));
}

TEST(SequenceAlignment, TooLargeTableIsAnInputErrorNotAHang) {
  AlignmentOptions options;
  options.max_cells = 100;
  auto a = items(std::vector<std::string>(20, "mm"));
  auto b = items(std::vector<std::string>(21, "mm"));
  EXPECT_THROW(alignSequences(a, b, options, "big"), InputError);
}

// The ET and the profiled step of one capture hold the same ops in the same
// order: paired in order with no table, however long (adds5k: 25,000 each,
// 625 million cells).
TEST(SequenceAlignment, IdenticalSequencesNeedNoTable) {
  AlignmentOptions options;
  options.max_cells = 100;
  std::vector<std::string> names;
  for (int i = 0; i < 50; ++i) names.push_back(i % 5 == 0 ? "add_" : "to");
  auto a = items(names, std::vector<int64_t>(50, -1));
  auto partner = alignSequences(a, a, options, "same");
  ASSERT_EQ(partner.size(), 50u);
  for (size_t i = 0; i < partner.size(); ++i) EXPECT_EQ(partner[i], int64_t(i));
  // One name off: the table again, and over this limit.
  names[7] = "mul";
  EXPECT_THROW(alignSequences(a, items(names), options, "one off"), InputError);
}

}  // namespace
}  // namespace tracetwin::core::kineto
