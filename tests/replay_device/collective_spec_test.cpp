// Reading collectives from communication nodes of every schema generation.
#include "replay/comm/collective_spec.h"

#include <gtest/gtest.h>

#include "core/errors.h"
#include "tests/support/comm_nodes.h"
#include "tests/support/values.h"

namespace tracetwin::replay::comm {
namespace {

using testing::commNode101;
using testing::commNode102;
using testing::commNode110;
using testing::commTensor;

TEST(CollectiveSpec, Schema110BroadcastOnOneRank) {
  const core::Node node = commNode110(437, "broadcast", {commTensor(434, 53120)});
  const CollectiveSpec spec = readCollective(node);
  EXPECT_EQ(spec.kind, Collective::kBroadcast);
  EXPECT_EQ(spec.group_size, 1);
  EXPECT_EQ(spec.group_size_from, "pg_size attribute");
  EXPECT_EQ(spec.input_tensors, 1);
  EXPECT_EQ(whyNotOneRank(spec), "");
}

TEST(CollectiveSpec, PositionalNameAndWorldSizeWithoutAttributes) {
  core::Node node = commNode110(500, "allreduce", {commTensor(1, 8)}, 1);
  node.comm.reset();  // as a reader that keeps no attributes would give it
  const CollectiveSpec spec = readCollective(node);
  EXPECT_EQ(spec.kind, Collective::kAllReduce);
  EXPECT_EQ(spec.recorded_name, "allreduce");
  EXPECT_EQ(spec.group_size, 1);
  EXPECT_EQ(spec.group_size_from, "positional world size");
}

TEST(CollectiveSpec, Schema102AllGatherOnTwoRanksNeedsDistributedReplay) {
  const core::Node node = commNode102(30, "all_gather", {commTensor(14, 1)}, 2);
  const CollectiveSpec spec = readCollective(node);
  EXPECT_EQ(spec.kind, Collective::kAllGather);
  EXPECT_EQ(spec.group_size, 2);
  const std::string why = whyNotOneRank(spec);
  EXPECT_EQ(why.rfind("needs distributed replay", 0), 0u) << why;
  EXPECT_NE(why.find("2 ranks"), std::string::npos) << why;
}

TEST(CollectiveSpec, Schema102WaitWithoutTensors) {
  const core::Node node = commNode102(40, "wait", {}, 1);
  const CollectiveSpec spec = readCollective(node);
  EXPECT_EQ(spec.kind, Collective::kWait);
  EXPECT_EQ(spec.input_tensors, 0);
  EXPECT_EQ(whyNotOneRank(spec), "");
}

TEST(CollectiveSpec, Schema101AllToAllvTakesGroupSizeFromSplits) {
  const std::vector<int64_t> splits(8, 768);
  const core::Node node = commNode101(727, "all_to_allv", commTensor(718, 6144), splits);
  const CollectiveSpec spec = readCollective(node);
  EXPECT_EQ(spec.kind, Collective::kAllToAllSingle);
  EXPECT_EQ(spec.group_size, 8);
  EXPECT_EQ(spec.group_size_from, "split sizes");
  EXPECT_EQ(spec.in_split, splits);
  EXPECT_NE(whyNotOneRank(spec).find("8 ranks"), std::string::npos);
}

TEST(CollectiveSpec, Schema101WithoutGroupSizeIsNotGuessed) {
  const core::Node node = commNode101(800, "allreduce", commTensor(1, 4), {});
  const CollectiveSpec spec = readCollective(node);
  EXPECT_EQ(spec.group_size, -1);
  EXPECT_NE(whyNotOneRank(spec).find("does not record the process-group size"), std::string::npos);
}

TEST(CollectiveSpec, SingleTensorAllToAllIsAllToAllSingle) {
  const core::Node node = commNode110(9, "all_to_all", {commTensor(1, 4)});
  EXPECT_EQ(readCollective(node).kind, Collective::kAllToAllSingle);
  const core::Node lists = commNode110(10, "all_to_all", {commTensor(1, 4), commTensor(3, 4)});
  EXPECT_EQ(readCollective(lists).kind, Collective::kAllToAll);
}

TEST(CollectiveSpec, C10dOpNames) {
  core::Node node;
  node.id = 436;
  node.name = "c10d::broadcast_";
  EXPECT_EQ(readCollective(node).kind, Collective::kBroadcast);
  node.name = "c10d::allreduce_";
  EXPECT_EQ(readCollective(node).kind, Collective::kAllReduce);
  node.name = "c10d::_allgather_base_";
  EXPECT_EQ(readCollective(node).kind, Collective::kAllGatherIntoTensor);
  node.name = "c10d::alltoall_base_";
  EXPECT_EQ(readCollective(node).kind, Collective::kAllToAllSingle);
  // c10d:: nodes carry the group as an opaque <Object>: size unknown.
  EXPECT_FALSE(whyNotOneRank(readCollective(node)).empty());
}

TEST(CollectiveSpec, PointToPointNeedsAPeer) {
  const core::Node node = commNode110(11, "send", {commTensor(1, 4)});
  const std::string why = whyNotOneRank(readCollective(node));
  EXPECT_NE(why.find("needs a peer rank"), std::string::npos) << why;
}

TEST(CollectiveSpec, UnknownCollectiveNamesNodeAndKnownNames) {
  const core::Node node = commNode110(12, "all_shuffle", {commTensor(1, 4)});
  try {
    readCollective(node, "t.json");
    FAIL();
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("t.json: node 12"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'all_shuffle'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("all_reduce"), std::string::npos) << msg;
  }
}

TEST(CollectiveSpec, NonCommunicationNodeIsRefused) {
  core::Node node;
  node.id = 3;
  node.name = "aten::add";
  EXPECT_THROW(readCollective(node), InputError);
}

TEST(CollectiveSpec, EveryCanonicalNameAndAliasResolves) {
  for (const CollectiveInfo& info : collectives()) {
    const CollectiveInfo* found = findCollective(info.name);
    ASSERT_NE(found, nullptr) << info.name;
    EXPECT_EQ(found->kind, info.kind);
    EXPECT_EQ(&collectiveInfo(info.kind), &info);
  }
  EXPECT_EQ(findCollective("allgather")->kind, Collective::kAllGather);
  EXPECT_EQ(findCollective("_reduce_scatter_base")->kind, Collective::kReduceScatterTensor);
  EXPECT_EQ(findCollective("nonsense"), nullptr);
}

}  // namespace
}  // namespace tracetwin::replay::comm
