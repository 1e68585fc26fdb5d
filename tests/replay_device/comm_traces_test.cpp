// The communication ops of the real sample traces, as the replay selects
// them, read into collectives. Expected figures were counted independently
// from the JSON (python3 over ../shared/traces; see each test).
#include <gtest/gtest.h>

#include <map>

#include "core/graph.h"
#include "core/trace_reader.h"
#include "replay/comm/collective_spec.h"
#include "tests/support/paths.h"

namespace tracetwin::replay::comm {
namespace {

struct CommSummary {
  std::map<std::string, int> by_collective;  // canonical name -> count
  int one_rank = 0;                          // whyNotOneRank() empty
  int distributed = 0;                       // "needs distributed replay"
  std::map<int64_t, int> by_group_size;
};

CommSummary summarize(const std::string& trace) {
  const core::Graph graph = core::readTrace(testing::sharedTrace(trace));
  const core::Selection selection = core::selectTopLevelOps(graph);
  CommSummary s;
  for (core::NodeId id : selection.ops) {
    const core::Node& node = graph.node(id);
    if (node.category != core::NodeCategory::kCommunication) continue;
    const CollectiveSpec spec = readCollective(node, graph.source_path);
    ++s.by_collective[collectiveInfo(spec.kind).name];
    ++s.by_group_size[spec.group_size];
    const std::string why = whyNotOneRank(spec);
    if (why.empty()) {
      ++s.one_rank;
    } else if (why.find("needs distributed replay") != std::string::npos) {
      ++s.distributed;
    }
  }
  return s;
}

TEST(CommTraces, Resnet110AllOneRank) {
  // 9 record_param_comms between the first two ProfilerStep# labels, all in a
  // process group of size 1 (pg_size attribute): 5 allreduce, 2 broadcast,
  // 2 wait.
  const CommSummary s = summarize("resnet_1.1.0_et.json.gz");
  const std::map<std::string, int> expected = {{"all_reduce", 5}, {"broadcast", 2}, {"wait", 2}};
  EXPECT_EQ(s.by_collective, expected);
  EXPECT_EQ(s.one_rank, 9);
  EXPECT_EQ(s.by_group_size.at(1), 9);
}

TEST(CommTraces, Resnet103ReadsTheSameFromPositionalInputs) {
  // Schema 1.0.3 has no comm attributes: name and world size are positional.
  const CommSummary s103 = summarize("resnet_1.0.3_et.json.gz");
  const CommSummary s110 = summarize("resnet_1.1.0_et.json.gz");
  EXPECT_EQ(s103.by_collective, s110.by_collective);
  EXPECT_EQ(s103.one_rank, 9);
}

TEST(CommTraces, AllGather102RanOnTwoRanks) {
  // 20 comms: 10 all_gather over 2 ranks (last positional Int) and 10 wait.
  const CommSummary s = summarize("allgather_1.0.2_et.json.gz");
  EXPECT_EQ(s.by_collective.at("all_gather"), 10);
  EXPECT_EQ(s.by_collective.at("wait"), 10);
  EXPECT_EQ(s.distributed, 10);
  EXPECT_EQ(s.one_rank, 10);  // the waits
}

TEST(CommTraces, Dlrm101Rank0) {
  // 13 comms on rank 0 of 8: all_to_allv with 8 split sizes, all_to_all,
  // allreduce (no size recorded in 1.0.1) and wait.
  const CommSummary s = summarize("dlrm_8rank/rank0.et.json.gz");
  int total = 0;
  for (const auto& [name, n] : s.by_collective) total += n;
  EXPECT_EQ(total, 13);
  EXPECT_EQ(s.by_collective.at("all_to_all_single"), 5);
  EXPECT_EQ(s.by_collective.at("all_reduce"), 3);
  EXPECT_EQ(s.by_collective.at("wait"), 5);
  EXPECT_EQ(s.by_group_size.at(8), 4);  // the all_to_allv ones
  EXPECT_EQ(s.one_rank, 5);             // only the waits
  EXPECT_EQ(s.distributed, 8);
}

}  // namespace
}  // namespace tracetwin::replay::comm
