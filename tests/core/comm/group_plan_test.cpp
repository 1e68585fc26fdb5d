// Which group a collective runs on in a distributed replay, and which groups
// a rank creates (core/comm/group_plan.h).
#include "core/comm/group_plan.h"

#include <gtest/gtest.h>

#include "core/errors.h"

namespace tracetwin::core::comm {
namespace {

core::Node commNode(core::NodeId id, const std::string& pg, int64_t start, int64_t stride,
                    int64_t size, const std::string& desc = "") {
  core::Node n;
  n.id = id;
  n.name = "record_param_comms";
  n.category = core::NodeCategory::kCommunication;
  core::CommAttributes c;
  c.collective_name = "allreduce";
  c.pg_name = pg;
  c.pg_desc = desc;
  c.global_rank_start = start;
  c.global_rank_stride = stride;
  c.pg_size = size;
  n.comm = c;
  return n;
}

CollectiveSpec sized(int64_t size) {
  CollectiveSpec s;
  s.kind = Collective::kAllReduce;
  s.group_size = size;
  s.group_size_from = "pg_size attribute";
  return s;
}

TEST(GroupPlan, RecordedMembersPickTheGroup) {
  const GroupLayout layout{1, 4, false};
  EXPECT_EQ(chooseGroup(commNode(1, "3", 0, 1, 4), sized(4), layout).group, "");  // the world
  EXPECT_EQ(chooseGroup(commNode(1, "5", 1, 2, 2), sized(2), layout).group, "5");  // ranks 1, 3
  EXPECT_EQ(chooseGroup(commNode(1, "0", 0, 1, 2, "default_pg"), sized(2), layout).group, "");
  const GroupChoice too_big = chooseGroup(commNode(1, "6", 2, 1, 4), sized(4), layout);
  EXPECT_NE(too_big.refusal.find("has rank 5 but the job has 4 ranks"), std::string::npos)
      << too_big.refusal;
}

TEST(GroupPlan, WithoutMembersOnlyTheWorldSizeFits) {
  core::Node old = commNode(1, "", -1, -1, -1);
  old.comm.reset();
  const GroupLayout layout{0, 8, false};
  EXPECT_EQ(chooseGroup(old, sized(8), layout).refusal, "");
  EXPECT_EQ(chooseGroup(old, sized(-1), layout).refusal, "");  // not recorded: the world
  const GroupChoice two = chooseGroup(old, sized(2), layout);
  EXPECT_NE(two.refusal.find("replay it with 2 ranks"), std::string::npos) << two.refusal;
  // The same trace on every rank: everything runs on the world.
  EXPECT_EQ(chooseGroup(old, sized(2), GroupLayout{0, 8, true}).refusal, "");
}

TEST(GroupPlan, RanksCreateTheirGroupsSortedAndOnlyTheirs) {
  core::Graph graph;
  core::Node root;
  root.id = 1;
  root.parent = 1;
  root.name = "[pytorch|profiler|execution_trace|process]";
  graph.addNode(root);
  for (auto [id, pg, start, stride] : std::vector<std::tuple<int, const char*, int, int>>{
           {2, "9", 0, 2}, {3, "4", 1, 2}, {4, "9", 0, 2}}) {
    core::Node n = commNode(id, pg, start, stride, 2);
    n.parent = 1;
    n.op_schema_text = "";
    graph.addNode(n);
  }
  graph.finalize();
  const std::vector<core::NodeId> ops = {2, 3, 4};
  const auto mine = groupsToCreate(graph, ops, GroupLayout{2, 4, false});
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].name, "9");
  EXPECT_EQ(mine[0].ranks, (std::vector<int>{0, 2}));
  EXPECT_EQ(groupsToCreate(graph, ops, GroupLayout{1, 4, false}).at(0).name, "4");
}

TEST(GroupPlan, AllToAllSplitsRedistributedForAnotherSize) {
  CollectiveSpec spec;
  spec.kind = Collective::kAllToAllSingle;
  spec.in_split = spec.out_split = std::vector<int64_t>(8, 3);  // recorded on 8 ranks
  const Splits s = resplitAllToAll(spec, 10, /*group_rank=*/1, /*group_size=*/3);
  EXPECT_EQ(s.in, (std::vector<int64_t>{4, 3, 3}));
  EXPECT_EQ(s.out, (std::vector<int64_t>{3, 3, 3}));
  EXPECT_TRUE(resplitAllToAll(spec, 24, 0, 8).in.empty());  // fits: kept
}

}  // namespace
}  // namespace tracetwin::core::comm
