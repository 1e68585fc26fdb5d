// Typed values as the reader builds them from the recorded type strings.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/errors.h"
#include "core/graph.h"
#include "core/trace_reader.h"
#include "tests/support/traces.h"

namespace tracetwin::core {
namespace {

using testing::modernNode;
using testing::modernTrace;

const Node& onlyOp(const Graph& g) { return g.node(3); }

Graph readOneNode(const std::string& values, const std::string& shapes, const std::string& types,
                  const std::string& schema = "1.1.0-chakra.0.0.4") {
  return parseTrace(modernTrace(modernNode(3, 2, "aten::foo", "aten::foo(Tensor self) -> Tensor",
                                           values, shapes, types),
                                schema),
                    "mem.json");
}

TEST(TraceValues, QuotedInfAndNanDoubles) {
  const Graph g = readOneNode(R"(["inf", "-inf", "nan", 0.5, 3])", "[[],[],[],[],[]]",
                              R"(["Double","Double","Double","Double","Double"])");
  const auto& in = onlyOp(g).inputs;
  ASSERT_EQ(in.size(), 5u);
  EXPECT_TRUE(std::isinf(in[0].double_value) && in[0].double_value > 0);
  EXPECT_TRUE(std::isinf(in[1].double_value) && in[1].double_value < 0);
  EXPECT_TRUE(std::isnan(in[2].double_value));
  EXPECT_DOUBLE_EQ(in[3].double_value, 0.5);
  EXPECT_DOUBLE_EQ(in[4].double_value, 3.0);
  for (const Value& v : in) EXPECT_EQ(v.kind, ValueKind::kDouble);
}

TEST(TraceValues, NestedListsOfTensorsWithShapes) {
  const Graph g =
      readOneNode(R"([[[[19,20,0,1,4,"cuda:0"],[5,23,0,6,4,"cuda:0"]]]])", "[[[[1],[2,3]]]]",
                  R"J(["GenericList[GenericList[Tensor(float),Tensor(float)]]"])J");
  const Value& outer = onlyOp(g).inputs.at(0);
  ASSERT_EQ(outer.kind, ValueKind::kList);
  ASSERT_EQ(outer.elements.size(), 1u);
  const Value& inner = outer.elements[0];
  ASSERT_EQ(inner.kind, ValueKind::kList);
  ASSERT_EQ(inner.elements.size(), 2u);
  EXPECT_EQ(inner.elements[0].type, "Tensor(float)");
  EXPECT_EQ(inner.elements[1].tensor->tensor_id, 5);
  EXPECT_EQ(inner.elements[1].tensor->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(inner.elements[1].tensor->dtype, DType::kFloat32);
  EXPECT_TRUE(outer.containsTensor());
}

TEST(TraceValues, UndefinedAndFiveFieldTensors) {
  const Graph g = readOneNode(R"([[507,0,0,0,0,""], [5,6,2,4,8]])", "[[],[4]]",
                              R"J(["Tensor(nullptr (uninitialized))", "Tensor(long int)"])J");
  const auto& in = onlyOp(g).inputs;
  EXPECT_FALSE(in[0].tensor->defined());
  EXPECT_EQ(in[0].tensor->dtype, DType::kUnknown);
  EXPECT_TRUE(in[1].tensor->defined());
  EXPECT_EQ(in[1].tensor->device, "");
  EXPECT_EQ(in[1].tensor->offset, 2);
  EXPECT_EQ(in[1].tensor->bytes(), 32);
  EXPECT_EQ(in[1].tensor->dtype, DType::kInt64);
  // Undefined tensors are not entries of the tensor table.
  EXPECT_EQ(g.tensors().size(), 1u);
}

TEST(TraceValues, ScalarsNoneGeneratorDeviceTuple) {
  const Graph g = readOneNode(
      R"(["<None>", "<Generator>", "cuda:1", "mean", true, 6, ["0", "default_pg"], 1, "<Object>"])",
      "[[],[],[],[],[],[],[[],[]],[],[]]",
      R"(["None","Generator","Device","String","Bool","ScalarType","Tuple[String,String]","Int","Object"])");
  const auto& in = onlyOp(g).inputs;
  EXPECT_EQ(in[0].kind, ValueKind::kNone);
  EXPECT_EQ(in[1].kind, ValueKind::kGenerator);
  EXPECT_EQ(in[2].kind, ValueKind::kDevice);
  EXPECT_EQ(in[2].string_value, "cuda:1");
  EXPECT_EQ(in[3].string_value, "mean");
  EXPECT_TRUE(in[4].bool_value);
  EXPECT_EQ(in[5].kind, ValueKind::kScalarType);
  EXPECT_EQ(in[5].int_value, 6);
  ASSERT_EQ(in[6].kind, ValueKind::kTuple);
  EXPECT_EQ(in[6].elements[1].string_value, "default_pg");
  EXPECT_EQ(in[7].int_value, 1);
  EXPECT_EQ(in[8].kind, ValueKind::kObject);
  EXPECT_EQ(in[8].string_value, "<Object>");
}

TEST(TraceValues, ListLongerThanItsTypeKeepsTheLastElementType) {
  // Lists are cut at 4096 elements in the type string; values can run on.
  const Graph g =
      readOneNode("[[1,2,3],[]]", "[[],[]]", R"(["GenericList[Int,Int]","GenericList[]"])");
  const Value& list = onlyOp(g).inputs[0];
  ASSERT_EQ(list.elements.size(), 3u);
  EXPECT_EQ(list.elements[2].kind, ValueKind::kInt);
  EXPECT_EQ(list.elements[2].int_value, 3);
  EXPECT_TRUE(onlyOp(g).inputs[1].elements.empty());
}

TEST(TraceValues, StridesAndTensorRange) {
  const std::string node = R"J({"id": 3, "name": "aten::mm", "ctrl_deps": 2,
    "inputs": {"values": [[11,2,0,16,2,"cuda:0"]], "shapes": [[4,4]], "types": ["Tensor(c10::BFloat16)"], "strides": [[1,4]]},
    "outputs": {"values": [], "shapes": [], "types": [], "strides": []},
    "attrs": [{"name": "op_schema", "type": "string", "value": "aten::mm(Tensor self, Tensor mat2) -> Tensor"},
              {"name": "tensor_range", "type": "string", "value": "{\"0\": [0, 9]}"},
              {"name": "tid", "type": "uint64", "value": 18446744073709551615}]})J";
  const Graph g = parseTrace(modernTrace(node, "1.1.1-chakra.0.0.4"), "mem.json");
  const Node& n = g.node(3);
  EXPECT_EQ(n.inputs[0].tensor->strides, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(n.inputs[0].tensor->dtype, DType::kBFloat16);
  EXPECT_EQ(n.tensor_range, R"({"0": [0, 9]})");
  EXPECT_EQ(n.tid, -1);  // uint64 max keeps its bits
}

TEST(TraceValues, LegacyFlatLayout) {
  const std::string json = R"J({"schema": "1.0.1", "pid": 1, "time": "t", "start_ts": 0, "nodes": [
    {"name": "aten::add", "id": 3, "rf_id": 9, "parent": 2, "fw_parent": 0, "seq_id": 4, "scope": 0,
     "tid": 1, "fw_tid": 0, "op_schema": "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
     "inputs": [[5,6,0,8,4,"cpu"],[7,8,0,8,4,"cpu"],1], "input_shapes": [[2,4],[2,4],[]],
     "input_types": ["Tensor(float)","Tensor(float)","Int"],
     "outputs": [[9,10,0,8,4,"cpu"]], "output_shapes": [[2,4]], "output_types": ["Tensor(float)"]},
    {"name": "[pytorch|profiler|execution_graph|thread]", "id": 2, "parent": 1, "op_schema": "",
     "inputs": [], "input_shapes": [], "input_types": [], "outputs": [], "output_shapes": [], "output_types": []},
    {"name": "[pytorch|profiler|execution_graph|process]", "id": 1, "parent": 1, "op_schema": "",
     "inputs": [], "input_shapes": [], "input_types": [], "outputs": [], "output_shapes": [], "output_types": []}
  ], "finish_ts": 5})J";
  const Graph g = parseTrace(json, "legacy.json");
  const Node& add = g.node(3);
  EXPECT_EQ(add.rf_id, 9);
  EXPECT_EQ(add.seq_id, 4);
  EXPECT_EQ(add.parent, 2);
  EXPECT_EQ(add.category, NodeCategory::kAtenCompute);
  ASSERT_EQ(add.inputs.size(), 3u);
  EXPECT_EQ(add.inputs[1].tensor->shape, (std::vector<int64_t>{2, 4}));
  EXPECT_TRUE(add.inputs[1].tensor->strides.empty());
  EXPECT_EQ(add.outputs[0].tensor->tensor_id, 9);
  EXPECT_EQ(selectTopLevelOps(g).ops, (std::vector<NodeId>{3}));
}

TEST(TraceValues, ReusedTensorIdsAreDistinctTensors) {
  // Id 5 is freed after node 3 and reused for a new storage in node 4; node 5
  // uses the first identity again: two table entries, not one and not three.
  const std::string nodes =
      modernNode(3, 2, "aten::a", "aten::a(Tensor self) -> Tensor", R"([[5,6,0,4,4,"cpu"]])",
                 "[[4]]", R"J(["Tensor(float)"])J") +
      ",\n" +
      modernNode(4, 2, "aten::b", "aten::b(Tensor self) -> Tensor", R"([[5,9,0,4,4,"cpu"]])",
                 "[[4]]", R"J(["Tensor(float)"])J") +
      ",\n" +
      modernNode(5, 2, "aten::c", "aten::c(Tensor self) -> Tensor", R"([[5,6,0,4,4,"cpu"]])",
                 "[[4]]", R"J(["Tensor(float)"])J");
  const Graph g = parseTrace(modernTrace(nodes), "mem.json");
  ASSERT_EQ(g.tensors().size(), 2u);
  EXPECT_EQ(g.tensors()[0].storage_id, 6);
  EXPECT_EQ(g.tensors()[0].first_node, 3);
  EXPECT_TRUE(g.tensors()[0].first_seen_as_input);
  EXPECT_EQ(g.tensors()[1].storage_id, 9);
  EXPECT_EQ(g.tensors()[1].first_node, 4);
}

TEST(TraceValues, NewerMinorSchemaReadsWithAWarning) {
  const Graph g = parseTrace(modernTrace("", "1.2.0-chakra.0.0.4"), "new.json");
  ASSERT_EQ(g.warnings.size(), 1u);
  EXPECT_NE(g.warnings[0].find("1.2.0-chakra.0.0.4"), std::string::npos);
}

TEST(TraceValues, EveryKnownSchemaIsAccepted) {
  for (const std::string& s : knownSchemas()) {
    const Graph g = parseTrace(modernTrace("", s), "known.json");
    EXPECT_EQ(g.schema, s);
    EXPECT_TRUE(g.warnings.empty()) << s;
  }
}

TEST(TraceValues, EscapedStringsAreUnescaped) {
  const Graph g = readOneNode(R"(["a\"b\\c\u00e9"])", "[[]]", R"(["String"])");
  EXPECT_EQ(onlyOp(g).inputs[0].string_value, "a\"b\\c\xc3\xa9");
}

// Short strings are checked for escapes a word at a time: an escape at every
// position of strings 1-44 bytes long (each side of the 8-byte steps and of
// the 40-byte switch to memchr) is found (a missed one would leave the
// backslash in the text); a string closely followed by an escaped one reads
// unchanged (the last word reads past its end).
TEST(TraceValues, EscapesAreFoundAtEveryPositionOfShortStrings) {
  for (size_t len = 1; len <= 44; ++len) {
    const std::string plain(len, 'x');
    const Graph p = readOneNode("[\"" + plain + "\",\"\\n\"]", "[[],[]]", R"(["String","String"])");
    EXPECT_EQ(onlyOp(p).inputs[0].string_value, plain) << len;
    EXPECT_EQ(onlyOp(p).inputs[1].string_value, "\n") << len;
    for (size_t at = 0; at < len; ++at) {
      std::string json = plain;
      json.replace(at, 1, "\\n");  // the two bytes \ and n
      std::string want = plain;
      want[at] = '\n';
      const Graph g = readOneNode("[\"" + json + "\"]", "[[]]", R"(["String"])");
      EXPECT_EQ(onlyOp(g).inputs[0].string_value, want) << len << " " << at;
    }
  }
}

}  // namespace
}  // namespace tracetwin::core
