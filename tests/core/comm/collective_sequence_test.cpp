// The collectives a rank's trace issues, in order, and the check that the
// ranks of a job agree (core/comm/collective_sequence.h). Expected figures
// were read off the traces with python3 (c10d/gloo/record_param_comms nodes).
#include "core/comm/collective_sequence.h"

#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/trace_reader.h"
#include "tests/support/paths.h"

namespace tracetwin::core::comm {
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

// PyTorch 1.13's Gloo all_to_all_single without split sizes: the DLRM step
// of a 2-rank job where rank 0 holds dims 24 and rank 1 none (B = 4): the
// forward sends 2 x 4 x 24 floats from rank 0 and nothing from rank 1; the
// backward sends each rank's received gradients back (4 x 24 each).
TEST(CollectiveSequence, AllToAllSplitsDerivedFromThePeersSendSizes) {
  auto a2a = [](core::NodeId node, int64_t floats, bool backward) {
    CollectiveStep s{node, "all_to_all_single", "", floats * 4};
    s.backward = backward;
    return s;
  };
  const CollectiveStep ar{9, "all_reduce", "", 400};
  const std::vector<std::vector<CollectiveStep>> ranks = {
      {a2a(1, 192, false), a2a(2, 96, true), ar}, {a2a(11, 0, false), a2a(12, 96, true), ar}};
  EXPECT_EQ(firstSequenceMismatch(ranks), "");  // sizes differ, splits unknown: allowed
  const auto elements = [](core::NodeId, int64_t bytes) { return bytes / 4; };
  const auto r0 = deriveAllToAllSplits(ranks, 0, elements);
  ASSERT_EQ(r0.size(), 2u);
  EXPECT_EQ(r0.at(1).in_split, (std::vector<int64_t>{96, 96}));
  EXPECT_EQ(r0.at(1).out_split, (std::vector<int64_t>{96, 0}));
  EXPECT_EQ(r0.at(2).in_split, (std::vector<int64_t>{96, 0}));  // the transpose
  EXPECT_EQ(r0.at(2).out_split, (std::vector<int64_t>{96, 96}));
  const auto r1 = deriveAllToAllSplits(ranks, 1, elements);
  EXPECT_EQ(r1.at(11).in_split, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(r1.at(11).out_split, (std::vector<int64_t>{96, 0}));
  EXPECT_EQ(r1.at(12).in_split, (std::vector<int64_t>{96, 0}));
  EXPECT_EQ(r1.at(12).out_split, (std::vector<int64_t>{0, 0}));
  // Equal sizes everywhere: PyTorch's even split, nothing to derive.
  EXPECT_TRUE(deriveAllToAllSplits({{a2a(1, 8, false)}, {a2a(2, 8, false)}}, 0, elements).empty());
  // Not a multiple of the group: an all_to_allv no rule recovers.
  try {
    deriveAllToAllSplits({{a2a(1, 7, false)}, {a2a(2, 8, false)}}, 0, elements);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 sends 7 elements"), std::string::npos)
        << e.what();
  }
  // A backward whose size is not its forward's transpose.
  EXPECT_THROW(deriveAllToAllSplits({{a2a(1, 8, false), a2a(2, 5, true)},
                                     {a2a(3, 4, false), a2a(4, 7, true)}},
                                    0, elements),
               InputError);
  // The phase survives the exchange.
  const auto back = sequenceFromText(sequenceToText(ranks[0]), "rank 0");
  EXPECT_FALSE(back[0].backward);
  EXPECT_TRUE(back[1].backward);
}

TEST(CollectiveSequence, MatchingPairsEachGroupsCollectivesByPosition) {
  // Ranks 0, 1 on group "a", ranks 2, 3 on "b", all four on the world.
  auto step = [](core::NodeId node, const char* name, const char* group) {
    return CollectiveStep{node, name, group, 64};
  };
  std::vector<std::vector<CollectiveStep>> ranks = {
      {step(10, "all_reduce", "a"), step(11, "all_reduce", "")},
      {step(20, "all_reduce", "a"), step(21, "all_reduce", "")},
      {step(30, "all_gather", "b"), step(31, "all_gather", "b"), step(32, "all_reduce", "")},
      {step(40, "all_gather", "b"), step(41, "all_gather", "b"), step(42, "all_reduce", "")}};
  const std::vector<MatchedCollective> m = matchAcrossRanks(ranks);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].group, "a");
  EXPECT_EQ(m[0].members, (std::vector<int>{0, 1}));
  EXPECT_EQ(m[1].group, "");
  EXPECT_EQ(m[1].members, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(m[1].steps[2].node, 32);
  EXPECT_EQ(m[1].index_in_rank[2], 2u);
  EXPECT_EQ(m[3].position, 1);
  EXPECT_EQ(m[3].steps[1].node, 41);
  // A rank that issues another collective on the world is refused.
  ranks[3][2].name = "broadcast";
  EXPECT_THROW(matchAcrossRanks(ranks), InputError);
}

}  // namespace
}  // namespace tracetwin::core::comm
