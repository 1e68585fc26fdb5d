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
#include "tests/support/graph_compare.h"
#include "tests/support/paths.h"
#include "tests/support/traces.h"

namespace tracetwin::core {
namespace {

using testing::expectIdenticalGraphs;
using testing::TempDir;

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
