// Chakra protobuf ETs (core/chakra): the shared trace read with its node
// counts, Python-literal node text, bad input with a clear error, and the
// round trip ET -> Chakra -> Graph on real traces.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>

#include "core/chakra/chakra_trace.h"
#include "core/chakra/python_literal.h"
#include "core/errors.h"
#include "core/gzip_file.h"
#include "core/trace_reader.h"
#include "tests/support/traces.h"
#include "tests/support/paths.h"

namespace tracetwin::core::chakra {
namespace {

using testing::sharedTrace;
using testing::TempDir;

std::string shared() { return sharedTrace("chakra_protobuf.0.et.gz"); }

// ---- node text -------------------------------------------------------------

TEST(PythonLiteral, ConverterReprBecomesJson) {
  EXPECT_EQ(pythonLiteralToJson("[[[4, 5, 0, 64, 4, 'cuda:0']], '<Object>', 0, -1]", "t"),
            R"([[[4,5,0,64,4,"cuda:0"]],"<Object>",0,-1])");
  EXPECT_EQ(pythonLiteralToJson("[True, False, None, (1, 2), (3,), 1.5, -2e-05]", "t"),
            "[true,false,null,[1,2],[3],1.5,-2e-05]");
  EXPECT_EQ(pythonLiteralToJson("[inf, -inf, nan]", "t"), R"(["inf","-inf","nan"])");
  EXPECT_EQ(pythonLiteralToJson(R"(['it\'s', "say \"hi\"", 'a\\b', '\x41\n'])", "t"),
            R"(["it's","say \"hi\"","a\\b","\u0041\n"])");
  EXPECT_EQ(pythonLiteralToJson("", "t"), "[]");
  EXPECT_EQ(pythonLiteralToJson(R"([1, "json", true, null])", "t"), R"([1,"json",true,null])");
}

TEST(PythonLiteral, BadTextNamesTheByte) {
  try {
    pythonLiteralToJson("[1, {'a': 2}]", "f.et: node 7: inputs.values");
    FAIL() << "a dict is not node text";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "f.et: node 7: inputs.values: byte 4: expected a list, tuple, string, number, "
                 "True, False or None, found \"{'a': 2}]\"");
  }
  EXPECT_THROW(pythonLiteralToJson("['unterminated", "t"), InputError);
  EXPECT_THROW(pythonLiteralToJson("[1, 2", "t"), InputError);
  EXPECT_THROW(pythonLiteralToJson(std::string(100, '['), "t"), InputError);  // nesting bound
}

// ---- the shared Chakra trace -----------------------------------------------

TEST(ChakraShared, NodeCounts) {
  ChakraSummary s;
  const std::vector<NodeRecord> nodes = readChakraNodes(shared(), &s);
  // README of shared/traces: a GlobalMetadata then 3,664 Node messages.
  EXPECT_EQ(nodes.size(), 3664u);
  EXPECT_EQ(s.nodes, 3664);
  EXPECT_EQ(s.node_types["COMP_NODE"], 3643);
  EXPECT_EQ(s.node_types["COMM_COLL_NODE"], 21);
  EXPECT_EQ(s.cpu_nodes, 2448);
  EXPECT_EQ(s.gpu_nodes, 1216);
  EXPECT_EQ(s.metadata["schema"], "1.0.1");
  EXPECT_EQ(nodes.front().id, 216u);
  EXPECT_EQ(nodes.front().name, "aten::flatten_dense_tensors(0)");
  EXPECT_EQ(nodes.front().duration_micros, 318u);
}

TEST(ChakraShared, ReadsAsAGraph) {
  ChakraSummary s;
  const Graph g = readChakraTrace(shared(), &s);
  EXPECT_EQ(g.format, "Chakra protobuf ET (no version)");
  EXPECT_EQ(g.schema, "1.0.1");
  // The converter's "op(1)", "op(2)" ... parts fold into their "op(0)".
  EXPECT_EQ(s.merged_parts, 1216);  // as many as the kernels the ops launched between them
  EXPECT_TRUE(s.synthesized_root);
  EXPECT_EQ(s.synthesized_threads, 4);  // CPU thread 1 and the kernels' three "tids"
  EXPECT_EQ(g.nodes().size(), 3664u - 1216u + 1u + 4u);
  const Node& flatten = g.node(216);
  EXPECT_EQ(flatten.name, "aten::flatten_dense_tensors");
  ASSERT_EQ(flatten.inputs.size(), 1u);
  EXPECT_EQ(flatten.inputs[0].kind, ValueKind::kList);
  EXPECT_EQ(flatten.outputs.at(0).tensor->numel, 53120);
  const Selection sel = selectTopLevelOps(g);
  EXPECT_EQ(sel.ops.size(), 1170u);
  EXPECT_EQ(sel.comm_ops, 7);  // 5 c10d::allreduce_, 2 c10d::broadcast_
  // readTrace tells the format by the first bytes.
  EXPECT_EQ(readTrace(shared()).nodes().size(), g.nodes().size());
}

// ---- bad input ---------------------------------------------------------------

std::string plainBytes(const std::string& gz_path) { return readMaybeGzipFile(gz_path); }

std::string errorOf(const std::string& path) {
  try {
    readChakraTrace(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ChakraBadInput, TruncatedFileNamesTheByte) {
  const std::string bytes = plainBytes(shared());
  TempDir dir;
  const std::string path = dir.write("cut.et", bytes.substr(0, 5000));
  const std::string e = errorOf(path);
  EXPECT_NE(e.find(path + ": byte "), std::string::npos) << e;
  EXPECT_NE(e.find("truncated: a Chakra Node of"), std::string::npos) << e;
  EXPECT_NE(e.find("bytes are left in the file"), std::string::npos) << e;
  // Cut inside the length prefix itself.
  const std::string one = dir.write("one.et", std::string("\x96", 1));
  EXPECT_NE(errorOf(one).find("truncated: expected the length of a Chakra GlobalMetadata"),
            std::string::npos)
      << errorOf(one);
}

TEST(ChakraBadInput, WrongMessageIsNamed) {
  const std::string bytes = plainBytes(shared());
  // Drop the GlobalMetadata: the first Node is read where it belongs.
  const size_t meta = static_cast<unsigned char>(bytes[0]) + 1;  // a one-byte varint (0x5e)
  ASSERT_LT(static_cast<unsigned char>(bytes[0]), 0x80);
  TempDir dir;
  const std::string no_meta = dir.write("nometa.et", bytes.substr(meta));
  EXPECT_NE(errorOf(no_meta).find(
                ": byte 0: expected a Chakra GlobalMetadata (the first message), found a Node "
                "(id 216, \"aten::flatten_dense_tensors(0)\")"),
            std::string::npos)
      << errorOf(no_meta);
  // The GlobalMetadata twice: the second one is where a Node belongs.
  const std::string twice = dir.write("twice.et", bytes.substr(0, meta) + bytes);
  EXPECT_NE(errorOf(twice).find(": byte 95: expected a Chakra Node, found a GlobalMetadata"),
            std::string::npos)
      << errorOf(twice);
}

// Graph ids are int64: a Chakra id of 2^63 or more would have turned negative.
TEST(ChakraBadInput, AnIdOver63BitsIsRefused) {
  const std::string bytes = plainBytes(shared());
  const size_t meta = static_cast<unsigned char>(bytes[0]) + 1;  // as WrongMessageIsNamed
  ASSERT_LT(static_cast<unsigned char>(bytes[0]), 0x80);
  // A Node {id: 2^63 + 5, name: "x"}: field 1 varint (10 bytes), field 2 string.
  std::string node = std::string("\x08", 1);
  for (uint64_t v = (uint64_t{1} << 63) + 5; v >= 0x80; v >>= 7) node += char((v & 0x7f) | 0x80);
  node += char(0x01);
  node += std::string("\x12\x01x", 3);
  TempDir dir;
  const std::string path = dir.write("bigid.et", bytes.substr(0, meta) + char(node.size()) + node);
  EXPECT_NE(errorOf(path).find(path + ": node \"x\" has id 9223372036854775813: expected 0 to "
                                      "2^63-1"),
            std::string::npos)
      << errorOf(path);
}

TEST(ChakraBadInput, EmptyAndGarbage) {
  TempDir dir;
  EXPECT_NE(errorOf(dir.write("empty.et", "")).find("empty file"), std::string::npos);
  const std::string garbage = dir.write("garbage.et", std::string("\x05\xff\xff\xff\xff\xff", 6));
  EXPECT_NE(errorOf(garbage).find("not valid protobuf"), std::string::npos) << errorOf(garbage);
}

TEST(ChakraDetection, JsonIsNotChakra) {
  EXPECT_FALSE(looksLikeChakraTrace("{\"schema\": \"1.0.1\""));
  EXPECT_FALSE(looksLikeChakraTrace(" \n{\"schema\": \"1.0.1\", \"nodes\": []}"));
  EXPECT_FALSE(looksLikeChakraTrace("[1, 2, 3]"));
  EXPECT_TRUE(looksLikeChakraTrace(plainBytes(shared()).substr(0, 64)));
}

// ---- round trip --------------------------------------------------------------

// Two values are the same recorded value (type, kind, scalars, tensors, shapes).
void expectSameValue(const Value& a, const Value& b, const std::string& where) {
  ASSERT_EQ(a.kind, b.kind) << where;
  EXPECT_EQ(a.type, b.type) << where;
  EXPECT_EQ(a.int_value, b.int_value) << where;
  EXPECT_EQ(a.bool_value, b.bool_value) << where;
  EXPECT_EQ(a.string_value, b.string_value) << where;
  if (std::isnan(a.double_value)) {
    EXPECT_TRUE(std::isnan(b.double_value)) << where;
  } else {
    EXPECT_EQ(a.double_value, b.double_value) << where;
  }
  if (a.isTensor()) {
    const TensorValue &x = *a.tensor, &y = *b.tensor;
    EXPECT_EQ(x.tensor_id, y.tensor_id) << where;
    EXPECT_EQ(x.storage_id, y.storage_id) << where;
    EXPECT_EQ(x.offset, y.offset) << where;
    EXPECT_EQ(x.numel, y.numel) << where;
    EXPECT_EQ(x.itemsize, y.itemsize) << where;
    EXPECT_EQ(x.device, y.device) << where;
    EXPECT_EQ(x.shape, y.shape) << where;
    EXPECT_EQ(x.strides, y.strides) << where;
  }
  ASSERT_EQ(a.elements.size(), b.elements.size()) << where;
  for (size_t i = 0; i < a.elements.size(); ++i)
    expectSameValue(a.elements[i], b.elements[i], where);
}

void expectSameGraph(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.nodes().size(), b.nodes().size());
  EXPECT_EQ(a.rootId(), b.rootId());
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    const Node &x = a.nodes()[i], &y = b.nodes()[i];
    const std::string where = "node " + std::to_string(x.id);
    ASSERT_EQ(x.id, y.id);
    EXPECT_EQ(x.name, y.name) << where;
    EXPECT_EQ(x.parent, y.parent) << where;
    EXPECT_EQ(x.category, y.category) << where;
    EXPECT_EQ(x.rf_id, y.rf_id) << where;
    EXPECT_EQ(x.tid, y.tid) << where;
    EXPECT_EQ(x.op_schema_text, y.op_schema_text) << where;
    EXPECT_EQ(x.kernel_backend, y.kernel_backend) << where;
    EXPECT_EQ(x.tensor_range, y.tensor_range) << where;
    ASSERT_EQ(x.comm.has_value(), y.comm.has_value()) << where;
    if (x.comm) {
      EXPECT_EQ(x.comm->collective_name, y.comm->collective_name) << where;
      EXPECT_EQ(x.comm->in_msg_nelems, y.comm->in_msg_nelems) << where;
      EXPECT_EQ(x.comm->pg_name, y.comm->pg_name) << where;
      EXPECT_EQ(x.comm->pg_size, y.comm->pg_size) << where;
      EXPECT_EQ(x.comm->in_split_size, y.comm->in_split_size) << where;
    }
    ASSERT_EQ(x.inputs.size(), y.inputs.size()) << where;
    for (size_t k = 0; k < x.inputs.size(); ++k) expectSameValue(x.inputs[k], y.inputs[k], where);
    ASSERT_EQ(x.outputs.size(), y.outputs.size()) << where;
    for (size_t k = 0; k < x.outputs.size(); ++k)
      expectSameValue(x.outputs[k], y.outputs[k], where);
  }
  EXPECT_EQ(selectTopLevelOps(a).ops, selectTopLevelOps(b).ops);
}

// A plan by hand: every selected op a COMP_NODE after the one before it.
ExportPlan chainPlan(const Graph& g) {
  ExportPlan plan;
  plan.durations_from = "test";
  NodeId previous = kNoNode;
  double us = 1;
  for (NodeId id : selectTopLevelOps(g).ops) {
    ExportOp op;
    op.duration_us = us++;
    if (previous != kNoNode) op.data_deps = {previous};
    plan.ops[id] = op;
    previous = id;
  }
  return plan;
}

class ChakraRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(ChakraRoundTrip, SameGraphBack) {
  const Graph original = readTrace(GetParam());
  TempDir dir;
  const ExportPlan plan = chainPlan(original);
  for (const char* name : {"t.et", "t.et.gz"}) {
    const std::string path = dir.path() + "/" + name;
    const WriteStats stats = writeChakraTrace(path, original, plan);
    EXPECT_EQ(stats.nodes, static_cast<int64_t>(original.nodes().size()));
    EXPECT_GT(stats.file_bytes, 0u);
    const Graph back = readTrace(path);
    EXPECT_EQ(back.format, "Chakra protobuf ET 0.0.4");
    EXPECT_EQ(back.schema, original.schema);
    EXPECT_TRUE(back.warnings.empty()) << back.warnings.front();
    expectSameGraph(original, back);
    const std::vector<NodeRecord> records = readChakraNodes(path);
    for (const NodeRecord& r : records) {
      auto op = plan.ops.find(static_cast<NodeId>(r.id));
      if (op == plan.ops.end()) {
        EXPECT_EQ(r.type, int(NodeType::kInvalid)) << r.id;
        continue;
      }
      EXPECT_EQ(r.type, int(NodeType::kComp)) << r.id;
      EXPECT_EQ(r.duration_micros, static_cast<uint64_t>(op->second.duration_us)) << r.id;
      std::vector<uint64_t> deps(op->second.data_deps.begin(), op->second.data_deps.end());
      EXPECT_EQ(r.data_deps, deps) << r.id;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Traces, ChakraRoundTrip,
                         ::testing::Values(testing::dataPath("cnn.et.json.gz"),
                                           sharedTrace("pt2_triton_1.1.1_et.json.gz"),
                                           sharedTrace("allgather_1.0.2_et.json.gz"),
                                           sharedTrace("resnet_1.1.0_et.json.gz"),
                                           sharedTrace("dlrm_8rank/rank0.et.json.gz")));

TEST(ChakraWrite, UnknownNodeInPlanIsAUsageError) {
  const Graph g = readTrace(testing::dataPath("mlp.et.json.gz"));
  ExportPlan plan;
  plan.ops[999999] = ExportOp{};
  TempDir dir;
  EXPECT_THROW(writeChakraTrace(dir.path() + "/x.et", g, plan), UsageError);
}

TEST(ChakraWrite, UnwritablePathIsAnInputError) {
  const Graph g = readTrace(testing::dataPath("mlp.et.json.gz"));
  EXPECT_THROW(writeChakraTrace("/nonexistent-dir/x.et", g, ExportPlan{}), InputError);
}

}  // namespace
}  // namespace tracetwin::core::chakra
