// The nodes array parsed on several threads (core/node_batches.h) must give
// the Graph one thread gives, node for node (order, ids, values, tensor
// table, shared schemas), whatever order the threads finish in, and refuse
// bad input with the same message and the offset in the whole file.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "core/errors.h"
#include "core/trace_reader.h"
#include "tests/support/paths.h"
#include "tests/support/traces.h"

namespace tracetwin::core {
namespace {

using testing::TempDir;

void expectSameValue(const Value& a, const Value& b) {
  ASSERT_EQ(a.kind, b.kind);
  ASSERT_EQ(a.type, b.type);
  ASSERT_EQ(a.int_value, b.int_value);
  ASSERT_EQ(a.bool_value, b.bool_value);
  ASSERT_EQ(a.string_value, b.string_value);
  if (a.double_value == a.double_value) {  // NaN is never equal to itself
    ASSERT_EQ(a.double_value, b.double_value);
  }
  const TensorValue& x = *a.tensor;
  const TensorValue& y = *b.tensor;
  ASSERT_EQ(x.tensor_id, y.tensor_id);
  ASSERT_EQ(x.storage_id, y.storage_id);
  ASSERT_EQ(x.offset, y.offset);
  ASSERT_EQ(x.numel, y.numel);
  ASSERT_EQ(x.itemsize, y.itemsize);
  ASSERT_EQ(x.device, y.device);
  ASSERT_EQ(x.dtype, y.dtype);
  ASSERT_EQ(x.shape, y.shape);
  ASSERT_EQ(x.strides, y.strides);
  ASSERT_EQ(a.elements.size(), b.elements.size());
  for (size_t i = 0; i < a.elements.size(); ++i) expectSameValue(a.elements[i], b.elements[i]);
}

// Nodes with one schema text share one OpSchema: the same pattern in both.
std::map<std::string, const OpSchema*> sharedSchemas(const Graph& g) {
  std::map<std::string, const OpSchema*> by_text;
  for (const Node& n : g.nodes()) {
    if (n.op_schema_text.empty()) continue;
    auto [it, fresh] = by_text.emplace(n.op_schema_text.str(), n.schema.get());
    EXPECT_EQ(it->second, n.schema.get()) << "node " << n.id << " has its own copy of a schema";
  }
  return by_text;
}

void expectIdenticalGraphs(const Graph& a, const Graph& b) {
  EXPECT_EQ(a.schema, b.schema);
  EXPECT_EQ(a.pid, b.pid);
  EXPECT_EQ(a.time, b.time);
  EXPECT_EQ(a.start_ts, b.start_ts);
  EXPECT_EQ(a.finish_ts, b.finish_ts);
  EXPECT_EQ(a.warnings, b.warnings);
  EXPECT_EQ(a.rootId(), b.rootId());
  ASSERT_EQ(a.nodes().size(), b.nodes().size());
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    const Node& x = a.nodes()[i];
    const Node& y = b.nodes()[i];
    SCOPED_TRACE(x.id);
    ASSERT_EQ(x.id, y.id);
    ASSERT_EQ(x.name, y.name);
    ASSERT_EQ(x.parent, y.parent);
    ASSERT_EQ(x.children, y.children);
    ASSERT_EQ(x.rf_id, y.rf_id);
    ASSERT_EQ(x.fw_parent, y.fw_parent);
    ASSERT_EQ(x.seq_id, y.seq_id);
    ASSERT_EQ(x.scope, y.scope);
    ASSERT_EQ(x.tid, y.tid);
    ASSERT_EQ(x.fw_tid, y.fw_tid);
    ASSERT_EQ(x.op_schema_text, y.op_schema_text);
    ASSERT_EQ(x.schema == nullptr, y.schema == nullptr);
    ASSERT_EQ(x.kernel_backend, y.kernel_backend);
    ASSERT_EQ(x.kernel_file, y.kernel_file);
    ASSERT_EQ(x.tensor_range, y.tensor_range);
    ASSERT_EQ(x.comm.has_value(), y.comm.has_value());
    ASSERT_EQ(x.comm->collective_name, y.comm->collective_name);
    ASSERT_EQ(x.comm->in_msg_nelems, y.comm->in_msg_nelems);
    ASSERT_EQ(x.comm->pg_name, y.comm->pg_name);
    ASSERT_EQ(x.category, y.category);
    ASSERT_EQ(x.inputs.size(), y.inputs.size());
    ASSERT_EQ(x.outputs.size(), y.outputs.size());
    for (size_t k = 0; k < x.inputs.size(); ++k) expectSameValue(x.inputs[k], y.inputs[k]);
    for (size_t k = 0; k < x.outputs.size(); ++k) expectSameValue(x.outputs[k], y.outputs[k]);
  }
  ASSERT_EQ(a.tensors().size(), b.tensors().size());
  for (size_t i = 0; i < a.tensors().size(); ++i) {
    const TensorRecord& x = a.tensors()[i];
    const TensorRecord& y = b.tensors()[i];
    ASSERT_EQ(x.tensor_id, y.tensor_id);
    ASSERT_EQ(x.storage_id, y.storage_id);
    ASSERT_EQ(x.offset, y.offset);
    ASSERT_EQ(x.numel, y.numel);
    ASSERT_EQ(x.itemsize, y.itemsize);
    ASSERT_EQ(x.device, y.device);
    ASSERT_EQ(x.dtype, y.dtype);
    ASSERT_EQ(x.first_node, y.first_node);
    ASSERT_EQ(x.first_seen_as_input, y.first_seen_as_input);
  }
  const auto sa = sharedSchemas(a);
  const auto sb = sharedSchemas(b);
  ASSERT_EQ(sa.size(), sb.size());
  for (const auto& [text, schema] : sa) EXPECT_EQ(schema == nullptr, sb.at(text) == nullptr);
}

// `n` op nodes, one per line after the first as PyTorch writes them (the
// fast cut), cycling through a few schemas; ~300 bytes a node.
std::string manyNodesTrace(int n) {
  const char* kSchemas[] = {"aten::relu(Tensor self) -> Tensor",
                            "aten::neg(Tensor self) -> Tensor",
                            "aten::abs(Tensor self) -> Tensor"};
  std::string nodes;
  for (int i = 0; i < n; ++i) {
    const long id = 3 + i;
    nodes += (i == 0 ? "" : ",\n") +
             testing::modernNode(id, 2, "aten::op" + std::to_string(i % 7), kSchemas[i % 3],
                                 "[[" + std::to_string(100 + i % 50) + "," +
                                     std::to_string(1000 + i % 50) + ",0,4,4,\"cpu\"]]",
                                 "[[2,2]]", R"J(["Tensor(float)"])J");
  }
  return "{\"schema\": \"1.1.0-chakra.0.0.4\", \"pid\": 7, \"nodes\": [\n" + nodes + ",\n" +
         "{\"id\": 2, \"name\": \"[pytorch|profiler|execution_trace|thread]\", \"ctrl_deps\": 1,"
         " \"inputs\": {\"values\": [], \"shapes\": [], \"types\": []}, \"outputs\": {\"values\": "
         "[], \"shapes\": [], \"types\": []}, \"attrs\": []},\n"
         "{\"id\": 1, \"name\": \"[pytorch|profiler|execution_trace|process]\", \"ctrl_deps\": 1,"
         " \"inputs\": {\"values\": [], \"shapes\": [], \"types\": []}, \"outputs\": {\"values\": "
         "[], \"shapes\": [], \"types\": []}, \"attrs\": []}\n"
         "], \"finish_ts\": 20}\n";
}

std::string errorOf(const std::string& path, size_t chunk, unsigned threads) {
  try {
    readTraceStreaming(path, chunk, threads);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError with " << threads << " threads";
  return {};
}

std::string wholeTextError(const std::string& text, const std::string& path) {
  try {
    parseTrace(text, path);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "parseTrace took it";
  return {};
}

class ParallelReadTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ParallelReadTest, SameGraphOneWayAndKWay) {
  TempDir dir;
  const std::string gz = testing::sharedTrace(GetParam());
  const std::string plain = dir.write("plain.json", readMaybeGzipFile(gz));
  const Graph one = readTraceStreaming(plain, 1 << 16, 1);
  for (unsigned threads : {2u, 4u}) {
    for (size_t chunk : {size_t{4099}, size_t{1} << 16}) {
      SCOPED_TRACE(::testing::Message() << threads << " threads, chunk " << chunk);
      expectIdenticalGraphs(one, readTraceStreaming(plain, chunk, threads));
    }
  }
  SCOPED_TRACE("gzip");
  expectIdenticalGraphs(one, readTraceStreaming(gz, 4099, 3));
}

INSTANTIATE_TEST_SUITE_P(Samples, ParallelReadTest,
                         ::testing::Values("pt2_triton_1.1.1_et.json.gz",
                                           "allgather_1.0.2_et.json.gz", "linear_1.0.1_et.json.gz",
                                           "dlrm_8rank/rank0.et.json.gz",
                                           "resnet_1.1.0_et.json.gz"));

TEST(ParallelRead, AnyFinishingOrderGivesTheSameGraph) {
  // ~1,200 batches of one or two nodes over 4 threads, several times: the
  // threads finish in a different order each time.
  TempDir dir;
  const std::string path = dir.write("many.json", manyNodesTrace(1500));
  const Graph one = readTraceStreaming(path, 1 << 20, 1);
  ASSERT_EQ(one.nodes().size(), 1502u);
  for (int round = 0; round < 4; ++round) {
    SCOPED_TRACE(round);
    expectIdenticalGraphs(one, readTraceStreaming(path, 300 + 97 * round, 4));
  }
}

TEST(ParallelRead, MinifiedNodesTakeTheExactCutOnThreadsToo) {
  // No newline before the first node: the exact scanner cuts the batches.
  TempDir dir;
  std::string text = manyNodesTrace(400);
  text.replace(text.find("[\n"), 2, "[");
  const std::string path = dir.write("minified.json", text);
  const Graph whole = parseTrace(text, path);
  expectIdenticalGraphs(whole, readTraceStreaming(path, 1000, 3));
}

TEST(ParallelRead, BadNodeInTheSecondHalfNamesItsOffsetInTheFile) {
  TempDir dir;
  const std::string good = manyNodesTrace(600);
  // A string id, a bad escape and a missing comma, each late in the file.
  std::string bad_id = good;
  bad_id.replace(bad_id.find("{\"id\": 480,"), 11, "{\"id\": \"480\",");
  std::string bad_escape = good;
  bad_escape.replace(bad_escape.find("\"aten::op3\"", good.size() * 2 / 3), 11, "\"aten::\\q3\"");
  std::string missing_comma = good;
  missing_comma.erase(missing_comma.find("},\n{\"id\": 500,") + 1, 1);
  int i = 0;
  for (const std::string& text : {bad_id, bad_escape, missing_comma}) {
    SCOPED_TRACE(i);
    const std::string path = dir.write("bad" + std::to_string(i++) + ".json", text);
    const std::string one = errorOf(path, 4096, 1);
    for (unsigned threads : {2u, 4u}) {
      EXPECT_EQ(errorOf(path, 4096, threads), one);
      EXPECT_EQ(errorOf(path, 1 << 20, threads), errorOf(path, 1 << 20, 1));
    }
    // The offset is the one in the whole file.
    const std::string whole = wholeTextError(text, path);
    ASSERT_NE(one.find(": byte "), std::string::npos) << one;
    EXPECT_EQ(one.substr(0, one.find(": byte ") + 7 + 5),
              whole.substr(0, whole.find(": byte ") + 7 + 5));
  }
}

TEST(ParallelRead, TruncatedInTheSecondHalfIsRefused) {
  TempDir dir;
  const std::string good = manyNodesTrace(300);
  for (size_t cut = good.size() / 2; cut + 1 < good.size(); cut += good.size() / 7) {
    const std::string path = dir.write("cut.json", good.substr(0, cut));
    EXPECT_EQ(errorOf(path, 2048, 3), errorOf(path, 2048, 1)) << cut;
  }
}

TEST(ParallelRead, ThreadsFromTheEnvironmentMustBeANumber) {
  TempDir dir;
  const std::string path = dir.write("many.json", manyNodesTrace(20));
  ::setenv("TRACETWIN_READER_THREADS", "two", 1);
  EXPECT_THROW(readTraceStreaming(path), UsageError);
  ::setenv("TRACETWIN_READER_THREADS", "3", 1);
  const Graph three = readTraceStreaming(path, 1024);
  ::unsetenv("TRACETWIN_READER_THREADS");
  expectIdenticalGraphs(readTraceStreaming(path, 1024, 1), three);
}

}  // namespace
}  // namespace tracetwin::core
