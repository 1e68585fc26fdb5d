// Graphs built by hand: structure checks, classification and selection rules.
#include "core/graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/errors.h"
#include "tests/support/values.h"

namespace tracetwin::core {
namespace {

Node makeNode(NodeId id, NodeId parent, const std::string& name, const std::string& schema = "") {
  Node n;
  n.id = id;
  n.parent = parent;
  n.name = name;
  n.op_schema_text = schema;
  return n;
}

// Root 1, thread 2, then whatever the test adds.
Graph baseGraph() {
  Graph g;
  g.source_path = "hand.json";
  g.addNode(makeNode(1, 1, "[pytorch|profiler|execution_trace|process]"));
  g.addNode(makeNode(2, 1, "[pytorch|profiler|execution_trace|thread]"));
  return g;
}

constexpr const char* kAdd =
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";

TEST(Graph, ChildrenSortedByIdWhateverTheFileOrder) {
  Graph g = baseGraph();
  g.addNode(makeNode(5, 2, "b", kAdd));
  g.addNode(makeNode(3, 2, "a", kAdd));
  g.addNode(makeNode(4, 3, "c", kAdd));
  g.finalize();
  EXPECT_EQ(g.node(2).children, (std::vector<NodeId>{3, 5}));
  EXPECT_EQ(g.node(3).children, (std::vector<NodeId>{4}));
  EXPECT_EQ(g.threadRoots(), (std::vector<NodeId>{2}));
  ASSERT_EQ(g.nodes().size(), 5u);
  for (size_t i = 0; i < g.nodes().size(); ++i)
    EXPECT_EQ(g.nodes()[i].id, static_cast<NodeId>(i + 1));
  EXPECT_EQ(g.findNode(42), nullptr);
  EXPECT_THROW(g.node(42), InputError);
}

TEST(Graph, SparseIdsAreSortedAndRepeatedIdsRefused) {
  // Ids far apart take the general sort, not the table indexed by id.
  Graph g = baseGraph();
  g.addNode(makeNode(1000000, 2, "far"));
  g.addNode(makeNode(500, 2, "mid"));
  g.addNode(makeNode(3, 2, "near"));
  g.finalize();
  std::vector<NodeId> ids;
  for (const Node& n : g.nodes()) ids.push_back(n.id);
  EXPECT_EQ(ids, (std::vector<NodeId>{1, 2, 3, 500, 1000000}));
  EXPECT_EQ(g.node(2).children, (std::vector<NodeId>{3, 500, 1000000}));
  for (NodeId far : {NodeId{4}, NodeId{1000000}}) {
    Graph dup = baseGraph();
    dup.addNode(makeNode(far, 2, "x"));
    dup.addNode(makeNode(3, 2, "y"));
    dup.addNode(makeNode(far, 2, "z"));
    try {
      dup.finalize();
      ADD_FAILURE() << "repeated id " << far << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("appears twice"), std::string::npos) << e.what();
    }
  }
}

TEST(Graph, FindNodeByIdWhetherIdsAreDenseOrSparse) {
  // Near-dense ids are found through a table indexed by id, sparse ones
  // through a hash map (core/node_index.h): same answers, absent ids on
  // either side of the range included.
  for (NodeId last : {NodeId{7}, NodeId{1000000}}) {
    Graph g = baseGraph();
    g.addNode(makeNode(last, 2, "last"));
    g.addNode(makeNode(4, 2, "four"));
    g.finalize();
    ASSERT_NE(g.findNode(4), nullptr) << last;
    EXPECT_EQ(g.findNode(4)->name, "four");
    EXPECT_EQ(g.node(last).name, "last");
    for (NodeId absent : {NodeId{-5}, NodeId{0}, NodeId{3}, NodeId{5}, last + 1, NodeId{1} << 40}) {
      EXPECT_EQ(g.findNode(absent), nullptr) << absent << " with last " << last;
    }
    EXPECT_THROW(g.node(3), InputError);
  }
}

// A float tensor of 4 elements on the CPU.
Value tensorValue(int64_t id, int64_t storage) { return testing::tensorValue(id, storage, {4}); }

TEST(Graph, TensorTableKeepsEachIdentityFromItsFirstUse) {
  // Nodes out of id order, more distinct ids than the index starts with,
  // and one id reused for another storage (a second tensor).
  Graph g = baseGraph();
  Node late = makeNode(4, 2, "late", kAdd);
  for (int64_t id = 100; id < 400; ++id) late.inputs.push_back(tensorValue(id, id));
  late.outputs.push_back(tensorValue(100, 7));  // id 100 again, other storage
  Node early = makeNode(3, 2, "early", kAdd);
  early.outputs.push_back(tensorValue(250, 250));  // first seen here, as an output
  g.addNode(std::move(late));
  g.addNode(std::move(early));
  g.finalize();
  ASSERT_EQ(g.tensors().size(), 301u);
  const TensorRecord& first = g.tensors()[0];
  EXPECT_EQ(first.tensor_id, 250);
  EXPECT_EQ(first.first_node, 3);
  EXPECT_FALSE(first.first_seen_as_input);
  EXPECT_EQ(g.tensors()[1].tensor_id, 100);
  EXPECT_TRUE(g.tensors()[1].first_seen_as_input);
  const TensorRecord& reused = g.tensors().back();
  EXPECT_EQ(reused.tensor_id, 100);
  EXPECT_EQ(reused.storage_id, 7);
  EXPECT_EQ(reused.first_node, 4);
  EXPECT_FALSE(reused.first_seen_as_input);
}

// From 4096 nodes finalize builds the tensor table on a second thread while
// it links and checks the structure: same table, and a bad structure still
// throws (after the table's thread is done).
TEST(Graph, BigGraphsTensorTableMatchesSmallOnesAndErrorsStillThrow) {
  const auto build = [](NodeId ops, bool cycle) {
    Graph g = baseGraph();
    // Written children before parents, as PyTorch does: the table must
    // follow ids, not file order.
    for (NodeId id = ops + 2; id >= 3; --id) {
      Node n = makeNode(id, 2, "aten::add", kAdd);
      n.inputs.push_back(tensorValue(id % 97, id % 97));  // ids reused across nodes
      n.outputs.push_back(tensorValue(1000 + id, 1000 + id));
      g.addNode(std::move(n));
    }
    if (cycle) {
      g.addNode(makeNode(ops + 3, ops + 4, "x"));
      g.addNode(makeNode(ops + 4, ops + 3, "y"));
    }
    return g;
  };
  for (NodeId ops : {NodeId{100}, NodeId{6000}}) {
    Graph g = build(ops, false);
    g.finalize();
    ASSERT_EQ(g.tensors().size(), static_cast<size_t>(97 + ops)) << ops;
    // Node 3 (the first op) uses tensor 3 in and 1003 out; tensor 0 first
    // appears at node 97.
    EXPECT_EQ(g.tensors()[0].tensor_id, 3);
    EXPECT_TRUE(g.tensors()[0].first_seen_as_input);
    EXPECT_EQ(g.tensors()[1].tensor_id, 1003);
    EXPECT_FALSE(g.tensors()[1].first_seen_as_input);
    const auto zero = std::find_if(g.tensors().begin(), g.tensors().end(),
                                   [](const TensorRecord& t) { return t.tensor_id == 0; });
    ASSERT_NE(zero, g.tensors().end());
    EXPECT_EQ(zero->first_node, 97);
    for (size_t i = 1; i < g.tensors().size(); ++i) {
      ASSERT_LE(g.tensors()[i - 1].first_node, g.tensors()[i].first_node) << i;
    }
    Graph bad = build(ops, true);
    EXPECT_THROW(bad.finalize(), InputError) << ops;
  }
}

TEST(Graph, SchemasAreParsedAndBadOnesWarn) {
  Graph g = baseGraph();
  g.addNode(makeNode(3, 2, "aten::add", kAdd));
  g.addNode(makeNode(4, 2, "weird::op", "weird::op(Tensor self"));
  g.finalize();
  ASSERT_TRUE(g.node(3).schema != nullptr);
  EXPECT_EQ(g.node(3).schema->overload, "Tensor");
  EXPECT_FALSE(g.node(4).schema != nullptr);
  ASSERT_EQ(g.warnings.size(), 1u);
  EXPECT_NE(g.warnings[0].find("node 4"), std::string::npos) << g.warnings[0];
  EXPECT_EQ(g.node(4).category, NodeCategory::kCustom);  // still an operator
}

// Replay would call the schema's operator, the predictor go by the name.
TEST(Graph, ANameThatIsNotItsSchemasOperatorWarns) {
  Graph g = baseGraph();
  g.addNode(makeNode(3, 2, "aten::add", kAdd));
  g.addNode(makeNode(4, 2, "aten::addmm", kAdd));  // "aten::add" would be a prefix
  g.addNode(makeNode(5, 2, "aten::sub", kAdd));
  g.finalize();
  ASSERT_EQ(g.warnings.size(), 1u);
  EXPECT_NE(g.warnings[0].find("2 node(s) named otherwise than their op_schema's operator (first: "
                               "node 4 'aten::addmm' with op_schema 'aten::add')"),
            std::string::npos)
      << g.warnings[0];
}

TEST(Graph, DanglingParentAndCyclesAreInputErrors) {
  Graph dangling = baseGraph();
  dangling.addNode(makeNode(3, 77, "x"));
  try {
    dangling.finalize();
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("hand.json: node 3 (\"x\") has parent 77"),
              std::string::npos)
        << e.what();
  }
  Graph cycle = baseGraph();
  cycle.addNode(makeNode(3, 5, "x"));
  cycle.addNode(makeNode(4, 3, "y"));
  cycle.addNode(makeNode(5, 4, "z"));
  EXPECT_THROW(cycle.finalize(), InputError);
  Graph two_roots = baseGraph();
  two_roots.addNode(makeNode(3, 3, "self"));
  EXPECT_THROW(two_roots.finalize(), InputError);
}

TEST(Graph, DeepChainNeedsNoRecursion) {
  Graph g = baseGraph();
  for (NodeId id = 3; id < 100000; ++id) g.addNode(makeNode(id, id - 1, "label"));
  g.finalize();
  EXPECT_EQ(g.nodes().size(), 99999u);
  EXPECT_TRUE(selectTopLevelOps(g).ops.empty());
}

TEST(Classify, MystiqueRules) {
  Node n = makeNode(3, 2, "record_param_comms");
  EXPECT_EQ(classifyNode(n), NodeCategory::kCommunication);
  n = makeNode(3, 2, "c10d::allreduce_", "c10d::allreduce_(Tensor[] tensors) -> Tensor[]");
  EXPECT_EQ(classifyNode(n), NodeCategory::kLabel);
  n = makeNode(3, 2, "triton_poi_fused_0");
  n.kernel_backend = "triton";
  EXPECT_EQ(classifyNode(n), NodeCategory::kTriton);
  n = makeNode(3, 2, "aten::add", kAdd);
  EXPECT_EQ(classifyNode(n), NodeCategory::kAtenCompute);
  n = makeNode(3, 2, "fbgemm::permute", "fbgemm::permute(Tensor a) -> Tensor");
  EXPECT_EQ(classifyNode(n), NodeCategory::kCustom);
  n = makeNode(3, 2, "## forward ##");
  EXPECT_EQ(classifyNode(n), NodeCategory::kLabel);
  EXPECT_STREQ(nodeCategoryName(NodeCategory::kTriton), "triton");
}

TEST(Selection, OperatorsAreKeptWithoutTheirChildrenAndLabelsAreDescended) {
  Graph g = baseGraph();
  g.addNode(makeNode(3, 2, "## forward ##"));
  g.addNode(makeNode(4, 3, "aten::linear", kAdd));
  g.addNode(makeNode(5, 4, "aten::addmm", kAdd));  // inside an operator: not selected
  g.addNode(makeNode(6, 2, "record_param_comms"));
  g.addNode(makeNode(7, 2, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"));
  g.addNode(makeNode(8, 7, "aten::stack", kAdd));  // under DataLoader: dropped
  g.finalize();
  const Selection sel = selectTopLevelOps(g);
  EXPECT_EQ(sel.ops, (std::vector<NodeId>{4, 6}));
  EXPECT_EQ(sel.comm_ops, 1);
  EXPECT_EQ(sel.data_loaders, (std::vector<NodeId>{7}));  // its time is charged by the predictor
  EXPECT_FALSE(sel.window.has_value());
}

TEST(Selection, TwoProfilerStepsKeepOneIteration) {
  Graph g = baseGraph();
  g.addNode(makeNode(3, 2, "aten::zeros", kAdd));  // before the first step
  g.addNode(makeNode(4, 2, "ProfilerStep#1"));
  g.addNode(makeNode(5, 4, "aten::mm", kAdd));
  g.addNode(makeNode(6, 4, "aten::relu", kAdd));
  g.addNode(makeNode(7, 2, "ProfilerStep#2"));
  g.addNode(makeNode(8, 7, "aten::mm", kAdd));
  g.addNode(makeNode(9, 2, "ProfilerStep#3"));
  g.addNode(makeNode(10, 9, "aten::mm", kAdd));
  g.finalize();
  const Selection sel = selectTopLevelOps(g);
  EXPECT_EQ(sel.ops, (std::vector<NodeId>{5, 6}));
  ASSERT_TRUE(sel.window.has_value());
  EXPECT_EQ(*sel.window, std::make_pair(NodeId{4}, NodeId{7}));
}

TEST(Selection, OneProfilerStepKeepsEverything) {
  Graph g = baseGraph();
  g.addNode(makeNode(3, 2, "ProfilerStep#1"));
  g.addNode(makeNode(4, 3, "aten::mm", kAdd));
  g.addNode(makeNode(5, 2, "aten::mm", kAdd));
  g.finalize();
  EXPECT_EQ(selectTopLevelOps(g).ops, (std::vector<NodeId>{4, 5}));
}

TEST(Selection, OpsOfTwoThreadsComeInIdOrder) {
  Graph g = baseGraph();
  g.addNode(makeNode(3, 1, "[pytorch|profiler|execution_trace|thread]"));
  g.addNode(makeNode(4, 2, "aten::a", kAdd));
  g.addNode(makeNode(5, 3, "aten::b", kAdd));
  g.addNode(makeNode(6, 2, "aten::c", kAdd));
  g.finalize();
  EXPECT_EQ(selectTopLevelOps(g).ops, (std::vector<NodeId>{4, 5, 6}));
  EXPECT_EQ(g.threadRoots().size(), 2u);
}

// The walk yields one ascending run per thread; few runs are merged, many
// sorted. Either way the ops come in id order.
TEST(Selection, OpsOfManyThreadsComeInIdOrder) {
  for (const int threads : {3, 24}) {
    Graph g = baseGraph();
    std::vector<NodeId> thread_ids = {2};
    for (int t = 1; t < threads; ++t) {
      thread_ids.push_back(2 + t);
      g.addNode(makeNode(2 + t, 1, "[pytorch|profiler|execution_trace|thread]"));
    }
    std::vector<NodeId> want;
    for (NodeId id = 100; id < 100 + 5 * threads; ++id) {  // round-robin over the threads
      g.addNode(makeNode(id, thread_ids[size_t(id) % thread_ids.size()], "aten::a", kAdd));
      want.push_back(id);
    }
    g.finalize();
    EXPECT_EQ(selectTopLevelOps(g).ops, want) << threads << " threads";
  }
}

}  // namespace
}  // namespace tracetwin::core
