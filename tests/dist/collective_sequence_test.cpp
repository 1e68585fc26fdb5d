// The collectives a rank's trace issues, in order, and the check that the
// ranks of a job agree (replay/dist/collective_sequence.h). Expected figures
// were read off the traces with python3 (c10d/gloo/record_param_comms nodes).
#include "replay/dist/collective_sequence.h"

#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/trace_reader.h"
#include "tests/support/paths.h"

namespace tracetwin::replay::dist {
namespace {

std::vector<CollectiveStep> sequenceOf(const std::string& path) {
  const core::Graph graph = core::readTrace(path);
  return collectiveSequence(graph, core::selectTopLevelOps(graph).ops);
}

TEST(CollectiveSequence, DlrmLikeCaptureOfPyTorch113) {
  // dlrm_tw rank 0: the pooled embeddings' all_to_all (a bare gloo label
  // under _AlltoAllSingle), its backward, and the dense gradients'
  // c10d::allreduce_ whose gloo label is its next sibling, not another one.
  const auto steps = sequenceOf(testing::dataPath("distributed/dlrm_tw.rank0.et.json.gz"));
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].name, "all_to_all_single");
  EXPECT_EQ(steps[0].bytes, 8192 * 4);
  EXPECT_EQ(steps[1].name, "all_to_all_single");
  EXPECT_EQ(steps[2].name, "all_reduce");
  EXPECT_EQ(steps[2].bytes, 13345 * 4);
  EXPECT_EQ(steps[2].group, "");
}

TEST(CollectiveSequence, DlrmEightRanksAgreeAndSkipWaits) {
  std::vector<std::vector<CollectiveStep>> ranks;
  for (int r = 0; r < 8; ++r) {
    ranks.push_back(
        sequenceOf(testing::sharedTrace("dlrm_8rank/rank" + std::to_string(r) + ".et.json.gz")));
  }
  // 13 record_param_comms per rank, 5 of them "wait".
  EXPECT_EQ(ranks[0].size(), 8u);
  EXPECT_EQ(firstSequenceMismatch(ranks), "");
  // The all_to_all with split sizes is not compared by bytes: ranks send
  // what they hold.
  int uneven = 0;
  for (const auto& s : ranks[0]) uneven += s.bytes < 0;
  EXPECT_EQ(uneven, 4);
}

TEST(CollectiveSequence, MismatchNamesRankPositionAndBothCollectives) {
  const auto ddp = sequenceOf(testing::dataPath("distributed/ddp_mlp.rank0.et.json.gz"));
  const auto dlrm = sequenceOf(testing::dataPath("distributed/dlrm_tw.rank1.et.json.gz"));
  const std::string why = firstSequenceMismatch({ddp, dlrm});
  EXPECT_NE(why.find("rank 1 differs from rank 0 at collective #0"), std::string::npos) << why;
  EXPECT_NE(why.find("all_to_all_single"), std::string::npos) << why;
  EXPECT_NE(why.find("all_reduce"), std::string::npos) << why;
}

TEST(CollectiveSequence, OneRankIssuingMoreIsAMismatch) {
  CollectiveStep a{10, "all_reduce", "", 64};
  CollectiveStep b{11, "broadcast", "", 64};
  const std::string why = firstSequenceMismatch({{a}, {a, b}});
  EXPECT_NE(why.find("rank 1 issues 2 collectives"), std::string::npos) << why;
  EXPECT_NE(why.find("broadcast"), std::string::npos) << why;
}

TEST(CollectiveSequence, GroupsAreComparedAmongTheirMembersOnly) {
  CollectiveStep world{1, "all_reduce", "", 8};
  CollectiveStep g{2, "all_gather", "7", 8};
  CollectiveStep other{3, "broadcast", "9", 8};
  // Ranks 0 and 1 share group 7; rank 2 is in group 9 alone.
  EXPECT_EQ(firstSequenceMismatch({{world, g}, {g, world}, {world, other}}), "");
  CollectiveStep g_bigger{2, "all_gather", "7", 16};
  EXPECT_NE(firstSequenceMismatch({{world, g}, {world, g_bigger}}), "");
}

TEST(CollectiveSequence, TextRoundTripAndErrors) {
  const std::vector<CollectiveStep> steps = {{5, "all_reduce", "", 40},
                                             {9, "all_to_all_single", "pg 1", -1}};
  const auto back = sequenceFromText(sequenceToText(steps), "rank 2");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].group, "pg 1");
  EXPECT_EQ(back[1].bytes, -1);
  EXPECT_EQ(firstSequenceMismatch({steps, back}), "");
  try {
    sequenceFromText("5 all_reduce\n", "rank 2");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 2: collective sequence line 1"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tracetwin::replay::dist
