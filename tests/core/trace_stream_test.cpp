// The streaming reader (big plain files) must give the same Graph and refuse
// the same bad input as the whole-file reader, whatever the chunk size.
#include <gtest/gtest.h>

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

class StreamingTest : public ::testing::TestWithParam<std::string> {};

TEST_P(StreamingTest, SameGraphAsWholeFileAtAnyChunkSize) {
  TempDir dir;
  const std::string plain =
      dir.write("plain.json", readMaybeGzipFile(testing::sharedTrace(GetParam())));
  const Graph whole = readTrace(plain);
  for (size_t chunk : {size_t{256}, size_t{4099}, size_t{1} << 20}) {
    SCOPED_TRACE(chunk);
    expectIdenticalGraphs(whole, readTraceStreaming(plain, chunk));
  }
}

INSTANTIATE_TEST_SUITE_P(Samples, StreamingTest,
                         ::testing::Values("pt2_triton_1.1.1_et.json.gz",
                                           "allgather_1.0.2_et.json.gz", "linear_1.0.1_et.json.gz",
                                           "dlrm_8rank/rank0.et.json.gz",
                                           "resnet_1.1.0_et.json.gz"));

std::string streamingError(const std::string& bytes, size_t chunk = 64) {
  TempDir dir;
  const std::string path = dir.write("bad.json", bytes);
  try {
    readTraceStreaming(path, chunk);
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    return msg;
  }
  ADD_FAILURE() << "no InputError";
  return {};
}

const std::string kGoodStream = testing::modernTrace(
    testing::modernNode(3, 2, "aten::relu", "aten::relu(Tensor self) -> Tensor",
                        R"J([[5,6,0,4,4,"cpu"]])J", "[[4]]", R"J(["Tensor(float)"])J"));

TEST(Streaming, EscapesAtEveryChunkBoundary) {
  // Escaped quotes and backslash runs inside node strings, cut at every
  // position by the chunk edges: a quote after an odd run of backslashes
  // does not end the string, after an even run it does.
  const std::string trace = testing::modernTrace(testing::modernNode(
      3, 2, R"J(a\"]}{[\\\"x\\)J", "aten::relu(Tensor self) -> Tensor",
      R"J([[5,6,0,4,4,"cpu"],"q\\\\\"[\\"])J", "[[4],[]]", R"J(["Tensor(float)","String"])J"));
  TempDir dir;
  const std::string path = dir.write("escapes.json", trace);
  const Graph whole = readTrace(path);
  ASSERT_EQ(whole.node(3).name, R"J(a"]}{[\"x\)J");
  for (size_t chunk = 16; chunk < 96; ++chunk) {
    for (unsigned threads : {1u, 3u}) {  // one thread, and batches parsed on three
      SCOPED_TRACE(::testing::Message() << chunk << " " << threads);
      const Graph streamed = readTraceStreaming(path, chunk, threads);
      expectIdenticalGraphs(whole, streamed);
      EXPECT_EQ(streamed.node(3).name, whole.node(3).name);
      EXPECT_EQ(streamed.node(3).inputs.at(1).string_value,
                whole.node(3).inputs.at(1).string_value);
    }
  }
}

// The fast cut guesses node boundaries from lines that open an object at the
// first node's indentation. Lines that look the same outside the nodes array
// (an unknown top-level key after it) or inside a node (a pretty-printed
// attrs list) must not change the Graph, at any chunk size.
TEST(Streaming, LinesThatLookLikeNodeStartsButAreNot) {
  const std::string node3 =
      "  {\"id\": 3, \"name\": \"aten::relu\", \"ctrl_deps\": 2,\n"
      "   \"inputs\": {\"values\": [], \"shapes\": [], \"types\": []},\n"
      "   \"outputs\": {\"values\": [], \"shapes\": [], \"types\": []},\n"
      "   \"attrs\": [\n"
      "  {\"name\": \"rf_id\", \"type\": \"uint64\", \"value\": 3},\n"
      "  {\"name\": \"scope\", \"type\": \"uint64\", \"value\": 0}\n"
      "   ]\n"
      "  }";
  const std::string trace =
      "{\"schema\": \"1.1.0-chakra.0.0.4\", \"pid\": 7, \"nodes\": [\n" + node3 + ",\n" +
      "  {\"id\": 2, \"name\": \"[pytorch|profiler|execution_trace|thread]\", \"ctrl_deps\": 1,"
      " \"inputs\": {\"values\": [], \"shapes\": [], \"types\": []}, \"outputs\": {\"values\": "
      "[], \"shapes\": [], \"types\": []}, \"attrs\": []},\n"
      "  {\"id\": 1, \"name\": \"[pytorch|profiler|execution_trace|process]\", \"ctrl_deps\": 1,"
      " \"inputs\": {\"values\": [], \"shapes\": [], \"types\": []}, \"outputs\": {\"values\": "
      "[], \"shapes\": [], \"types\": []}, \"attrs\": []}\n"
      "],\n"
      "\"extra\": [\n"
      "  {\"a\": 1},\n"
      "  {\"b\": \"},\\n  {\"}\n"
      "],\n"
      "\"finish_ts\": 20}\n";
  TempDir dir;
  const std::string path = dir.write("lookalike.json", trace);
  const Graph whole = parseTrace(trace, path);
  ASSERT_EQ(whole.nodes().size(), 3u);
  EXPECT_EQ(whole.finish_ts, 20);
  for (size_t chunk = 16; chunk < trace.size() + 8; chunk += 7) {
    for (unsigned threads : {1u, 3u}) {  // on threads, a misread cut reads the file again
      SCOPED_TRACE(::testing::Message() << chunk << " " << threads);
      const Graph streamed = readTraceStreaming(path, chunk, threads);
      expectIdenticalGraphs(whole, streamed);
      EXPECT_EQ(streamed.node(3).scope, 0);
    }
  }
}

TEST(Streaming, GzipIsReadWhileParsed) {
  // The shared traces are gzip: the same Graph as parsing the whole text.
  const std::string gz = testing::sharedTrace("dlrm_8rank/rank0.et.json.gz");
  const std::string text = readMaybeGzipFile(gz);
  expectIdenticalGraphs(parseTrace(text, gz), readTraceStreaming(gz, 4099));
}

TEST(Streaming, TruncatedAnywhereNeverReads) {
  for (size_t cut = 1; cut + 1 < kGoodStream.size(); cut += 5) {
    EXPECT_FALSE(streamingError(kGoodStream.substr(0, cut)).empty()) << cut;
  }
}

TEST(Streaming, BadInputsAreRefused) {
  EXPECT_NE(streamingError("").find("empty file"), std::string::npos);
  EXPECT_NE(streamingError("[1]").find("top-level JSON array"), std::string::npos);
  EXPECT_NE(
      streamingError(testing::modernTrace("", "2.0.0")).find("unknown execution-trace schema"),
      std::string::npos);
  EXPECT_NE(streamingError(R"({"schema": "1.0.1", "nodes": ["x"]})").find("a node object"),
            std::string::npos);
  EXPECT_NE(streamingError(R"({"schema": "1.0.1", "nodes": [{"id": 1, "parent": 1},]})")
                .find("a node object"),
            std::string::npos);
  EXPECT_NE(streamingError(kGoodStream + "{}").find("end of the document"), std::string::npos);
  // A bad value inside a node: the offset is the one in the file.
  std::string bad_id = kGoodStream;
  const size_t at = bad_id.find("\"id\": 3");
  bad_id.replace(at, 7, "\"id\": \"3\"");
  const std::string msg = streamingError(bad_id, 1 << 20);
  try {
    parseTrace(bad_id, "x");
  } catch (const InputError& e) {
    const std::string whole = e.what();
    EXPECT_EQ(msg.substr(msg.find(": byte")), whole.substr(whole.find(": byte")));
  }
  std::string missing_comma = kGoodStream;
  missing_comma.erase(missing_comma.find("},\n{\"id\": 2") + 1, 1);
  EXPECT_FALSE(streamingError(missing_comma).empty());
}

}  // namespace
}  // namespace tracetwin::core
