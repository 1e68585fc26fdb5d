// `export --chakra`'s plan (cli/chakra_export.h) written and read back: the
// DLRM ranks' collectives (type, bytes, order on their group), data
// dependencies, durations from the original's Kineto trace; memory copies
// and point-to-point sends on small traces; and the round trip ET -> Chakra
// -> Graph giving the same plan again.
#include "cli/chakra_export.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <limits>
#include <map>

#include "core/chakra/chakra_trace.h"
#include "core/errors.h"
#include "core/kineto/kineto_reader.h"
#include "core/kineto/linker.h"
#include "core/trace_reader.h"
#include "tests/support/paths.h"
#include "tests/support/traces.h"

namespace tracetwin::cli {
namespace {

using core::chakra::CollectiveType;
using core::chakra::NodeType;

DurationSource kinetoDurations(const core::Graph& g, const std::string& kineto) {
  const auto linked = core::kineto::linkTraces(g, core::kineto::readKinetoTrace(kineto));
  DurationSource d;
  d.name = "kineto";
  d.device = linked.kernels > 0;
  for (const auto& op : linked.ops)
    if (op.matched)
      d.ops[op.id] = {op.device_us, op.duration_us, op.start_us - linked.iteration_start_us};
  return d;
}

// The plan's ops as the written file holds them, by id.
std::map<uint64_t, core::chakra::NodeRecord> writtenOps(const std::string& path) {
  std::map<uint64_t, core::chakra::NodeRecord> ops;
  for (auto& r : core::chakra::readChakraNodes(path))
    if (r.type != int(NodeType::kInvalid)) ops.emplace(r.id, std::move(r));
  return ops;
}

class DlrmRanks : public ::testing::TestWithParam<int> {};

TEST_P(DlrmRanks, CollectivesDependenciesAndDurationsRoundTrip) {
  const int rank = GetParam();
  const std::string stem = testing::sharedTrace(fmt::format("dlrm_8rank/rank{}", rank));
  const core::Graph g = core::readTrace(stem + ".et.json.gz");
  const DurationSource d = kinetoDurations(g, stem + ".kineto.json.gz");
  const core::chakra::ExportPlan plan = buildExportPlan(g, d, rank, 8);
  // DESIGN.md: DLRM rank 0 selects 493 ops, 13 of them collectives.
  const core::Selection sel = core::selectTopLevelOps(g);
  EXPECT_EQ(plan.ops.size(), sel.ops.size());
  int64_t colls = 0, waits = 0;
  for (const auto& [id, op] : plan.ops) {
    if (op.why == "waits for an earlier collective") {
      ++waits;
      EXPECT_EQ(op.type, NodeType::kComp);
    }
    if (op.type != NodeType::kCommColl) continue;
    ++colls;
    EXPECT_GT(op.comm_bytes, 0) << id;
    EXPECT_TRUE(op.collective.has_value()) << id;
    EXPECT_FALSE(op.on_cpu);
    for (core::NodeId dep : op.data_deps) EXPECT_LT(dep, id);
  }
  EXPECT_EQ(colls + waits, sel.comm_ops);
  // Rank 0: 8 collectives (5 all_to_all_single, 3 all_reduce) and 5 waits.
  if (rank == 0) {
    EXPECT_EQ(colls, 8);
    EXPECT_EQ(waits, 5);
  }

  testing::TempDir dir;
  const std::string path = dir.path() + "/rank.et";
  const core::chakra::WriteStats stats = core::chakra::writeChakraTrace(path, g, plan);
  EXPECT_EQ(stats.node_types.at("COMM_COLL_NODE"), colls);
  const auto written = writtenOps(path);
  ASSERT_EQ(written.size(), plan.ops.size());
  for (const auto& [id, op] : plan.ops) {
    const core::chakra::NodeRecord& r = written.at(uint64_t(id));
    EXPECT_EQ(r.type, int(op.type)) << id;
    EXPECT_EQ(r.duration_micros, uint64_t(std::max(0.0, op.duration_us) + 0.5)) << id;
    EXPECT_EQ(r.data_deps, std::vector<uint64_t>(op.data_deps.begin(), op.data_deps.end())) << id;
    for (uint64_t dep : r.data_deps) EXPECT_TRUE(written.count(dep)) << id << " waits on " << dep;
    if (op.type == NodeType::kCommColl) {
      EXPECT_EQ(r.comm_type, int64_t(*op.collective)) << id;
      EXPECT_EQ(r.comm_size, op.comm_bytes) << id;
      EXPECT_EQ(r.is_cpu_op, false) << id;
    }
  }
  // Read back, the trace gives the same plan: same ops, dependencies, bytes.
  const core::Graph back = core::readTrace(path);
  const core::chakra::ExportPlan again = buildExportPlan(back, d, rank, 8);
  ASSERT_EQ(again.ops.size(), plan.ops.size());
  for (const auto& [id, op] : plan.ops) {
    const core::chakra::ExportOp& o = again.ops.at(id);
    EXPECT_EQ(o.type, op.type) << id;
    EXPECT_EQ(o.data_deps, op.data_deps) << id;
    EXPECT_EQ(o.comm_bytes, op.comm_bytes) << id;
    EXPECT_EQ(o.collective, op.collective) << id;
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, DlrmRanks, ::testing::Values(0, 5));

TEST(ChakraExport, OpsWithoutDurationsKeepTheirStructure) {
  const core::Graph g = core::readTrace(testing::dataPath("mlp.et.json.gz"));
  DurationSource none;
  none.name = "none";
  const core::chakra::ExportPlan plan = buildExportPlan(g, none, -1, -1);
  for (const auto& [id, op] : plan.ops) {
    EXPECT_EQ(op.duration_us, 0);
    EXPECT_TRUE(op.on_cpu);  // a CPU trace's times would be the host's
  }
  // Compute ops form one chain in issue order.
  const auto ops = core::selectTopLevelOps(g).ops;
  for (size_t i = 1; i < ops.size(); ++i) {
    const auto& deps = plan.ops.at(ops[i]).data_deps;
    EXPECT_TRUE(std::count(deps.begin(), deps.end(), ops[i - 1])) << ops[i];
  }
}

std::string node(long id, const std::string& name, const std::string& schema,
                 const std::string& in_values, const std::string& in_types,
                 const std::string& out_values, const std::string& out_types,
                 const std::string& extra_attrs = "") {
  return fmt::format(
      R"({{"id": {}, "name": "{}", "ctrl_deps": 2,
  "inputs": {{"values": {}, "shapes": [], "types": {}}},
  "outputs": {{"values": {}, "shapes": [], "types": {}}},
  "attrs": [{{"name": "rf_id", "type": "uint64", "value": {}}}, {{"name": "tid", "type": "uint64", "value": 1}}, {{"name": "op_schema", "type": "string", "value": "{}"}}{}]}})",
      id, name, in_values, in_types, out_values, out_types, id, schema, extra_attrs);
}

TEST(ChakraExport, MemoryCopiesSendsRecvsAndGroups) {
  const std::string nodes =
      node(10, "aten::_to_copy", "aten::_to_copy(Tensor self, *, Device? device=None) -> Tensor",
           R"j([[1,2,0,256,4,"cpu"]])j", R"j(["Tensor(float)"])j", R"j([[3,4,0,256,4,"cuda:0"]])j",
           R"j(["Tensor(float)"])j") +
      ",\n" +
      node(11, "aten::copy_",
           "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
           R"j([[5,6,0,8,8,"cpu"],[3,4,0,8,8,"cuda:0"],false])j",
           R"j(["Tensor(long)","Tensor(long)","Bool"])j", R"j([[5,6,0,8,8,"cpu"]])j",
           R"j(["Tensor(long)"])j") +
      ",\n" +
      node(12, "c10d::send",
           "c10d::send(Tensor[] tensors, __torch__.torch.classes.c10d.ProcessGroup "
           "process_group, int dstRank, int tag) -> __torch__.torch.classes.c10d.Work",
           R"j([[[3,4,0,256,4,"cuda:0"]],"<Object>",1,7])j",
           R"j(["GenericList[Tensor(float)]","Object","Int","Int"])j", R"j(["<Object>"])j",
           R"j(["Object"])j") +
      ",\n" +
      node(13, "c10d::recv_",
           "c10d::recv_(Tensor[] tensors, __torch__.torch.classes.c10d.ProcessGroup "
           "process_group, int srcRank, int tag) -> __torch__.torch.classes.c10d.Work",
           R"j([[[9,10,0,32,4,"cuda:0"]],"<Object>",1,7])j",
           R"j(["GenericList[Tensor(float)]","Object","Int","Int"])j", R"j(["<Object>"])j",
           R"j(["Object"])j") +
      ",\n" +
      // A 1.1.0 collective on a group of ranks 1 and 3: what its comms
      // attributes say, with no tensors recorded.
      node(14, "record_param_comms", "", "[]", "[]", "[]", "[]",
           R"j(, {"name": "collective_name", "type": "string", "value": "allreduce"},
{"name": "dtype", "type": "string", "value": "Float"},
{"name": "in_msg_nelems", "type": "uint64", "value": 64},
{"name": "pg_name", "type": "string", "value": "3"},
{"name": "global_rank_start", "type": "uint64", "value": 1},
{"name": "global_rank_stride", "type": "uint64", "value": 2},
{"name": "pg_size", "type": "uint64", "value": 2})j");
  testing::TempDir dir;
  const core::Graph g = core::readTrace(dir.write("t.json", testing::modernTrace(nodes)));
  DurationSource d;
  d.name = "test";
  d.device = true;
  d.ops[10] = {5, 9, 0};
  const core::chakra::ExportPlan plan = buildExportPlan(g, d, 0, 2);
  ASSERT_EQ(plan.ops.size(), 5u);
  const auto& load = plan.ops.at(10);
  EXPECT_EQ(load.type, NodeType::kMemLoad);
  EXPECT_EQ(load.tensor_bytes, 1024);
  EXPECT_EQ(load.duration_us, 5);  // device time where there is one
  EXPECT_FALSE(load.on_cpu);
  const auto& store = plan.ops.at(11);
  EXPECT_EQ(store.type, NodeType::kMemStore);
  EXPECT_EQ(store.tensor_bytes, 64);
  EXPECT_EQ(store.data_deps, std::vector<core::NodeId>({10}));  // it reads what 10 wrote
  const auto& send = plan.ops.at(12);
  EXPECT_EQ(send.type, NodeType::kCommSend);
  EXPECT_EQ(send.comm_bytes, 1024);
  EXPECT_EQ(send.peer, 1);
  EXPECT_EQ(send.tag, 7);
  const auto& recv = plan.ops.at(13);
  EXPECT_EQ(recv.type, NodeType::kCommRecv);
  EXPECT_EQ(recv.comm_bytes, 128);
  EXPECT_EQ(recv.peer, 1);
  const auto& coll = plan.ops.at(14);
  EXPECT_EQ(coll.type, NodeType::kCommColl);
  EXPECT_EQ(coll.collective, CollectiveType::kAllReduce);
  EXPECT_EQ(coll.comm_bytes, 256);  // in_msg_nelems x 4 bytes
  EXPECT_EQ(coll.pg_name, "3");
  EXPECT_EQ(coll.pg_ranks, (std::vector<int64_t>{1, 3}));
  // Written, ASTRA-sim's feeder finds its attributes.
  const std::string path = dir.path() + "/t.et";
  core::chakra::writeChakraTrace(path, g, plan);
  const auto written = writtenOps(path);
  EXPECT_EQ(written.at(10).tensor_size, 1024);
  EXPECT_EQ(written.at(12).comm_src, 0);
  EXPECT_EQ(written.at(12).comm_dst, 1);
  EXPECT_EQ(written.at(12).comm_size, 1024);
  EXPECT_EQ(written.at(12).is_cpu_op, false);
  EXPECT_EQ(written.at(13).type, int(NodeType::kCommRecv));
  EXPECT_EQ(written.at(13).comm_src, 1);  // the peer sends to this rank
  EXPECT_EQ(written.at(13).comm_dst, 0);
  EXPECT_EQ(written.at(14).comm_type, int64_t(CollectiveType::kAllReduce));
  EXPECT_EQ(written.at(14).comm_size, 256);
  EXPECT_EQ(written.at(14).pg_name, "3");
  // A comm_size no collective has: the reader names the node.
  for (const int64_t bytes : {int64_t{-5}, std::numeric_limits<int64_t>::max()}) {
    core::chakra::ExportPlan bad = plan;
    bad.ops.at(14).comm_bytes = bytes;  // the max: 1024 + 128 more from the send and recv
    const std::string bad_path = dir.path() + fmt::format("/bad{}.et", bytes < 0 ? "neg" : "max");
    core::chakra::writeChakraTrace(bad_path, g, bad);
    core::chakra::ChakraSummary summary;
    try {
      core::chakra::readChakraNodes(bad_path, &summary);
      ADD_FAILURE() << "comm_size " << bytes << " was read";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(
                    fmt::format("node 14 (\"record_param_comms\"): comm_size {}", bytes)),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace tracetwin::cli
