// Collectives recorded without record_param_comms (core/bare_collectives.cpp):
// PyTorch 1.13's c10d ops and gloo:/nccl: labels become the collective once,
// whichever way Gloo's async work nested them.
#include <gtest/gtest.h>

#include "core/graph.h"
#include "core/trace_reader.h"
#include "tests/support/paths.h"

namespace tracetwin::core {
namespace {

class Builder {
 public:
  Builder() {
    add(1, 1, "[pytorch|profiler|execution_graph|process]");
    add(2, 1, "[pytorch|profiler|execution_graph|thread]");
  }
  Builder& add(NodeId id, NodeId parent, const std::string& name, const std::string& schema = "") {
    Node n;
    n.id = id;
    n.parent = parent;
    n.name = name;
    n.op_schema_text = schema;
    graph_.addNode(n);
    return *this;
  }
  Graph build() {
    graph_.finalize();
    return std::move(graph_);
  }

 private:
  Graph graph_;
};

const char* kAllreduce = "c10d::allreduce_(Tensor[] _0, __torch__.torch.classes.c10d.ProcessGroup _1) -> ()";
const char* kAllgather = "c10d::allgather_(Tensor[][] _0, Tensor[] _1) -> ()";

std::vector<std::string> selectedNames(const Graph& g) {
  std::vector<std::string> out;
  for (NodeId id : selectTopLevelOps(g).ops) out.push_back(g.node(id).name);
  return out;
}

TEST(BareCollectives, C10dOpWithItsLabelInsideIsOneCollective) {
  const Graph g = Builder().add(3, 2, "c10d::allreduce_", kAllreduce).add(4, 3, "gloo:all_reduce").build();
  EXPECT_EQ(g.node(3).category, NodeCategory::kCommunication);
  EXPECT_EQ(g.node(4).category, NodeCategory::kLabel);
  EXPECT_EQ(selectedNames(g), std::vector<std::string>{"c10d::allreduce_"});
}

TEST(BareCollectives, LabelRightAfterItsC10dOpIsThatOpsWork) {
  // Gloo ran the work on its own thread after the op returned: the label is
  // the op's next sibling, not a second collective.
  const Graph g = Builder()
                      .add(3, 2, "c10d::allgather_", kAllgather)
                      .add(4, 2, "gloo:all_gather")
                      .add(5, 2, "c10d::allreduce_", kAllreduce)
                      .add(6, 5, "gloo:all_reduce")
                      .build();
  EXPECT_EQ(selectedNames(g), (std::vector<std::string>{"c10d::allgather_", "c10d::allreduce_"}));
}

TEST(BareCollectives, ABareLabelIsTheCollective) {
  // all_to_all_single on Gloo leaves only its label, here under an autograd
  // function's label.
  const Graph g = Builder()
                      .add(3, 2, "_AlltoAllSingle")
                      .add(4, 3, "gloo:all_to_all")
                      .add(5, 2, "c10d::allreduce_", kAllreduce)
                      .add(6, 5, "gloo:all_reduce")
                      .build();
  EXPECT_EQ(selectedNames(g), (std::vector<std::string>{"gloo:all_to_all", "c10d::allreduce_"}));
}

TEST(BareCollectives, RecordParamCommsInsideKeepsTheC10dOpALabel) {
  const Graph g = Builder()
                      .add(3, 2, "c10d::allreduce_", kAllreduce)
                      .add(4, 3, "record_param_comms", "")
                      .add(5, 4, "nccl:all_reduce")
                      .build();
  EXPECT_EQ(g.node(3).category, NodeCategory::kLabel);
  EXPECT_EQ(selectedNames(g), std::vector<std::string>{"record_param_comms"});
}

TEST(BareCollectives, TwoRankCaptureSelectsEachCollectiveOnce) {
  // ddp_mlp rank 0 (capture.py --nproc 2): DDP's one bucket all-reduce.
  const Graph g = readTrace(testing::dataPath("distributed/ddp_mlp.rank0.et.json.gz"));
  const Selection sel = selectTopLevelOps(g);
  EXPECT_EQ(sel.comm_ops, 1);
}

}  // namespace
}  // namespace tracetwin::core
