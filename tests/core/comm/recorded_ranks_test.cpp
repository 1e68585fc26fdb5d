// The check that rank traces' records fit their places in the job
// (core/comm/recorded_ranks.h): a copied trace, a subset of a job's ranks,
// split sizes that do not pair up. Expected figures were read off the DLRM
// traces with python3 (record_param_comms inputs: rank before the name,
// split lists of 8 x 768 rows).
#include "core/comm/recorded_ranks.h"

#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/trace_reader.h"
#include "tests/support/paths.h"

namespace tracetwin::core::comm {
namespace {

std::vector<CollectiveStep> dlrmRank(int rank) {
  const core::Graph graph = core::readTrace(
      testing::sharedTrace("dlrm_8rank/rank" + std::to_string(rank) + ".et.json.gz"));
  return collectiveSequence(graph, core::selectTopLevelOps(graph).ops);
}

std::string contradiction(const std::vector<std::vector<CollectiveStep>>& ranks) {
  return firstRecordContradiction(pairAcrossRanks(ranks), ranks.size());
}

// A collective of a schema-1.1.0 trace: the group's global ranks recorded as
// start + k * stride.
CollectiveStep recorded(core::NodeId node, const std::string& name, int64_t group_rank,
                        int64_t group_size, const std::string& group = "0") {
  CollectiveStep s;
  s.node = node;
  s.name = name;
  s.group = group;
  s.bytes = 64;
  s.group_rank = group_rank;
  s.group_size = group_size;
  s.global_rank_start = 0;
  s.global_rank_stride = 1;
  return s;
}

TEST(RecordedRanks, DlrmEightRanksFitTheirPlaces) {
  std::vector<std::vector<CollectiveStep>> ranks;
  for (int r = 0; r < 8; ++r) ranks.push_back(dlrmRank(r));
  EXPECT_EQ(ranks[3][0].name, "all_to_all_single");
  EXPECT_EQ(ranks[3][0].group_rank, 3);
  EXPECT_EQ(ranks[3][0].group_size, 8);  // schema 1.0.1: the length of its split sizes
  EXPECT_EQ(ranks[3][0].in_split, std::vector<int64_t>(8, 768));
  EXPECT_EQ(contradiction(ranks), "");
  EXPECT_NO_THROW(matchAcrossRanks(ranks));
}

TEST(RecordedRanks, ACopiedTraceInAnotherRanksSlotIsNamed) {
  std::vector<std::vector<CollectiveStep>> ranks;
  for (int r = 0; r < 8; ++r) ranks.push_back(dlrmRank(r == 5 ? 0 : r));
  // The sequences agree: kinds, order and bytes are rank 0's.
  EXPECT_EQ(firstSequenceMismatch(ranks), "");
  const std::string why = contradiction(ranks);
  EXPECT_NE(why.find("rank 5's trace records all_to_all_single"), std::string::npos) << why;
  EXPECT_NE(why.find("as rank 0 of its 8-rank group, where rank 5 is group rank 5"),
            std::string::npos)
      << why;
  try {
    matchAcrossRanks(ranks);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not the ranks of one job: rank 5's trace"),
              std::string::npos)
        << e.what();
  }
}

TEST(RecordedRanks, ASubsetOfAJobsRanksIsRefused) {
  std::vector<std::vector<CollectiveStep>> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back(dlrmRank(r));
  // The all_to_all's 8 split sizes say the group has 8 ranks.
  const std::string why = contradiction(ranks);
  EXPECT_NE(why.find("on a group of 8 ranks, but 4 of the job's 4 traces issue it (the traces of "
                     "some ranks are missing)"),
            std::string::npos)
      << why;
}

TEST(RecordedRanks, GlobalRanksFromStartAndStride) {
  const CollectiveStep r0 = recorded(20, "all_reduce", 0, 2);
  const CollectiveStep r1 = recorded(20, "all_reduce", 1, 2);
  EXPECT_EQ(contradiction({{r0}, {r1}}), "");
  const std::string why = contradiction({{r0}, {r0}});
  EXPECT_NE(why.find("rank 1's trace records all_reduce #0 on group '0' (op 20) as rank 0 of a "
                     "group starting at global rank 0 with stride 1, i.e. global rank 0"),
            std::string::npos)
      << why;
  // A group of ranks 1 and 3 (start 1, stride 2) among 4: rank 3 is its rank 1.
  CollectiveStep odd = recorded(7, "broadcast", 0, 2, "5");
  odd.global_rank_start = 1;
  odd.global_rank_stride = 2;
  CollectiveStep odd3 = odd;
  odd3.group_rank = 1;
  const CollectiveStep w = recorded(3, "all_reduce", 0, 4);
  auto world = [&](int64_t r) {
    CollectiveStep s = w;
    s.group_rank = r;
    return s;
  };
  EXPECT_EQ(contradiction({{world(0)}, {world(1), odd}, {world(2)}, {world(3), odd3}}), "");
  EXPECT_NE(contradiction({{world(0)}, {world(1), odd3}, {world(2)}, {world(3), odd}}), "");
  // Not recorded (c10d:: ops, PyTorch 1.13's Gloo): nothing to compare.
  CollectiveStep bare = r0;
  bare.group_rank = -1;
  EXPECT_EQ(contradiction({{bare}, {bare}}), "");
}

TEST(RecordedRanks, GroupSizesAgainstTheRanksThatIssueThem) {
  // A named group recorded with 4 ranks that 2 traces issue.
  EXPECT_NE(contradiction({{recorded(1, "all_reduce", 0, 4)}, {recorded(1, "all_reduce", 1, 4)}})
                .find("on a group of 4 ranks, but 2 of the job's 2 traces issue it"),
            std::string::npos);
  // On the default group, a smaller size is a subgroup in a schema that does
  // not name groups (before 1.0.3): every rank issues its own group's.
  auto unnamed = [](int64_t group_rank) {
    CollectiveStep s = recorded(1, "all_reduce", group_rank, 2, "");
    s.global_rank_start = s.global_rank_stride = -1;
    return s;
  };
  EXPECT_EQ(contradiction({{unnamed(0)}, {unnamed(1)}, {unnamed(0)}, {unnamed(1)}}), "");
}

TEST(RecordedRanks, AllToAllSplitsMustPairUp) {
  auto a2a = [](core::NodeId node, int64_t rank, std::vector<int64_t> in,
                std::vector<int64_t> out) {
    CollectiveStep s = recorded(node, "all_to_all_single", rank, 2);
    s.bytes = -1;
    s.in_split = std::move(in);
    s.out_split = std::move(out);
    return s;
  };
  // Rank 0 sends 3 rows to rank 1, which expects 3 from it; and back 4.
  EXPECT_EQ(contradiction({{a2a(20, 0, {2, 3}, {2, 4})}, {a2a(21, 1, {4, 1}, {3, 1})}}), "");
  const std::string why =
      contradiction({{a2a(20, 0, {2, 3}, {2, 4})}, {a2a(21, 1, {4, 1}, {5, 1})}});
  EXPECT_NE(why.find("all_to_all_single #0 on group '0': rank 0 sends 3 rows to rank 1 (op 20), "
                     "but rank 1 expects 5 from rank 0 (op 21)"),
            std::string::npos)
      << why;
}

TEST(RecordedRanks, RecordsSurviveTheExchangeBetweenRanks) {
  CollectiveStep s = recorded(20, "all_to_all_single", 1, 2, "pg 1");
  s.in_split = {3, 4};
  s.global_rank_start = 2;
  const auto back = sequenceFromText(sequenceToText({s, recorded(21, "all_reduce", 1, 2)}), "r");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].group_rank, 1);
  EXPECT_EQ(back[0].group_size, 2);
  EXPECT_EQ(back[0].global_rank_start, 2);
  EXPECT_EQ(back[0].global_rank_stride, 1);
  EXPECT_EQ(back[0].in_split, (std::vector<int64_t>{3, 4}));
  EXPECT_TRUE(back[0].out_split.empty());
  EXPECT_EQ(back[0].group, "pg 1");
  EXPECT_TRUE(back[1].in_split.empty());
  EXPECT_THROW(sequenceFromText("5 all_reduce 8 F 0 2 0 1 3,x - 0\n", "r"), InputError);
}

}  // namespace
}  // namespace tracetwin::core::comm
