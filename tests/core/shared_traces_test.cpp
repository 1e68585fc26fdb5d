// Every shared sample trace, read and selected: the counts DESIGN.md states
// (the same numbers param's et_replay selection gives on these files).
#include <gtest/gtest.h>

#include <string>

#include "core/errors.h"
#include "core/graph.h"
#include "core/trace_reader.h"
#include "tests/support/paths.h"

namespace tracetwin::core {
namespace {

struct Expected {
  std::string file;
  std::string schema;
  size_t nodes;
  size_t top_level;
  int64_t comms;
  int64_t triton;
};

class SharedTraceTest : public ::testing::TestWithParam<Expected> {};

TEST_P(SharedTraceTest, ReadsAndSelectsTheDocumentedOps) {
  const Expected& e = GetParam();
  const Graph g = readTrace(testing::sharedTrace(e.file));
  EXPECT_EQ(g.schema, e.schema);
  EXPECT_EQ(g.nodes().size(), e.nodes);
  EXPECT_TRUE(g.warnings.empty()) << g.warnings.front();
  EXPECT_EQ(g.rootId(), 1);
  const Selection sel = selectTopLevelOps(g);
  EXPECT_EQ(sel.ops.size(), e.top_level);
  EXPECT_EQ(sel.comm_ops, e.comms);
  EXPECT_EQ(sel.triton_ops, e.triton);
  // Execution order: ascending ids, each op inside the window when there is one.
  for (size_t i = 1; i < sel.ops.size(); ++i) ASSERT_LT(sel.ops[i - 1], sel.ops[i]);
  if (sel.window) {
    EXPECT_GT(sel.ops.front(), sel.window->first);
    EXPECT_LT(sel.ops.back(), sel.window->second);
  }
}

std::vector<Expected> expectations() {
  std::vector<Expected> all{
      {"resnet_1.0.3_et.json.gz", "1.0.3-chakra.0.0.4", 14391, 1237, 9, 0},
      {"resnet_1.1.0_et.json.gz", "1.1.0-chakra.0.0.4", 14392, 1237, 9, 0},
      {"linear_1.0.1_et.json.gz", "1.0.1", 931, 320, 0, 0},
      {"pt2_triton_1.1.1_et.json.gz", "1.1.1-chakra.0.0.4", 20, 2, 0, 1},
      {"allgather_1.0.2_et.json.gz", "1.0.2-chakra.0.0.4", 263, 120, 20, 0},
  };
  for (int r = 0; r < 8; ++r) {
    all.push_back(
        {"dlrm_8rank/rank" + std::to_string(r) + ".et.json.gz", "1.0.1", 1675, 493, 13, 0});
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Samples, SharedTraceTest, ::testing::ValuesIn(expectations()),
                         [](const ::testing::TestParamInfo<Expected>& info) {
                           std::string name = info.param.file;
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(SharedTraces, ResnetWindowIsTheFirstTwoProfilerSteps) {
  const Graph g = readTrace(testing::sharedTrace("resnet_1.1.0_et.json.gz"));
  const Selection sel = selectTopLevelOps(g);
  ASSERT_TRUE(sel.window.has_value());
  EXPECT_EQ(g.node(sel.window->first).name, "ProfilerStep#6");
  EXPECT_EQ(g.node(sel.window->second).name, "ProfilerStep#7");
}

TEST(SharedTraces, ModernCommsCarryAttributes) {
  const Graph g = readTrace(testing::sharedTrace("resnet_1.1.0_et.json.gz"));
  const Node* comm = nullptr;
  for (NodeId id : selectTopLevelOps(g).ops) {
    if (g.node(id).category == NodeCategory::kCommunication) comm = &g.node(id);
  }
  ASSERT_NE(comm, nullptr);
  ASSERT_TRUE(comm->comm.has_value());
  EXPECT_FALSE(comm->comm->collective_name.empty());
  EXPECT_EQ(comm->comm->pg_size, 1);
  EXPECT_EQ(comm->comm->pg_desc, "default_pg");
  EXPECT_EQ(comm->comm->dtype.empty(), false);
}

TEST(SharedTraces, LegacyCommsFilledFromPositionalInputs) {
  // resnet 1.0.3 has no comms attrs: name and process group come from inputs.
  const Graph g = readTrace(testing::sharedTrace("resnet_1.0.3_et.json.gz"));
  int broadcasts = 0;
  for (const Node& n : g.nodes()) {
    if (n.name != "record_param_comms") continue;
    ASSERT_TRUE(n.comm.has_value()) << n.id;
    if (n.comm->collective_name == "broadcast") {
      ++broadcasts;
      EXPECT_EQ(n.comm->pg_name, "0");
      EXPECT_EQ(n.comm->pg_desc, "default_pg");
      EXPECT_EQ(n.comm->pg_size, 1);
      EXPECT_GT(n.comm->in_msg_nelems, 0);
    }
  }
  EXPECT_GT(broadcasts, 0);
  // allgather 1.0.2: world size 2 is the last positional Int.
  const Graph ag = readTrace(testing::sharedTrace("allgather_1.0.2_et.json.gz"));
  int all_gathers = 0;
  for (const Node& n : ag.nodes()) {
    if (n.name != "record_param_comms" || n.comm->collective_name != "all_gather") continue;
    ++all_gathers;
    EXPECT_EQ(n.comm->pg_size, 2);
    EXPECT_EQ(n.comm->dtype, "Float");
  }
  EXPECT_EQ(all_gathers, 10);
}

TEST(SharedTraces, TritonStreamPointerHasNoStrides) {
  const Graph g = readTrace(testing::sharedTrace("pt2_triton_1.1.1_et.json.gz"));
  const Node& triton = g.node(16);
  EXPECT_EQ(triton.category, NodeCategory::kTriton);
  ASSERT_EQ(triton.inputs.size(), 6u);
  EXPECT_EQ(triton.inputs[0].tensor->strides, (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(triton.inputs[5].kind, ValueKind::kInt);
  EXPECT_EQ(triton.inputs[5].int_value, 140382148398488);
  EXPECT_EQ(triton.kernel_file, "cm742fnyrs4e65orusgacb3ex55efiixw4flktezbgqlge5nvorn.py");
  const Node& mm = g.node(13);
  ASSERT_TRUE(mm.schema != nullptr);
  EXPECT_EQ(mm.schema->overload, "out");
  EXPECT_TRUE(mm.schema->arguments[2].kwarg_only);
}

// readTrace reads a Chakra ET with its own reader (tests/core/chakra_test.cpp);
// the JSON reader alone says what the file is.
TEST(SharedTraces, ChakraProtobufIsNotJson) {
  EXPECT_EQ(readTrace(testing::sharedTrace("chakra_protobuf.0.et.gz")).format,
            "Chakra protobuf ET (no version)");
  try {
    readTraceStreaming(testing::sharedTrace("chakra_protobuf.0.et.gz"));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("chakra_protobuf.0.et.gz"), std::string::npos) << msg;
    EXPECT_NE(msg.find("Chakra protobuf"), std::string::npos) << msg;
    EXPECT_NE(msg.find("not JSON"), std::string::npos) << msg;
  }
}

TEST(SharedTraces, KinetoTraceIsNotAnExecutionTrace) {
  EXPECT_THROW(readTrace(testing::sharedTrace("linear_kineto.json.gz")), InputError);
}

}  // namespace
}  // namespace tracetwin::core
