// Malformed traces: each must raise InputError naming the file and the byte
// offset or node id, and what was expected. Never a crash or a partial graph.
#include <gtest/gtest.h>
#include <libdeflate.h>
#include <sys/stat.h>

#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/errors.h"
#include "core/input_files.h"
#include "core/trace_reader.h"
#include "tests/support/paths.h"
#include "tests/support/traces.h"

namespace tracetwin::core {
namespace {

using testing::modernNode;
using testing::modernTrace;
using testing::TempDir;

// Reads `bytes` from a file in a temp dir; returns the InputError message.
std::string errorReading(const std::string& bytes, const std::string& name = "bad.json") {
  TempDir dir;
  const std::string path = dir.write(name, bytes);
  try {
    readTrace(path);
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << "message should name the file: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
    return msg;
  }
  ADD_FAILURE() << "no InputError for " << name;
  return {};
}

std::string gzip(const std::string& data) {
  std::unique_ptr<libdeflate_compressor, void (*)(libdeflate_compressor*)> c(
      libdeflate_alloc_compressor(6), libdeflate_free_compressor);
  std::string out(libdeflate_gzip_compress_bound(c.get(), data.size()), '\0');
  out.resize(libdeflate_gzip_compress(c.get(), data.data(), data.size(), out.data(), out.size()));
  return out;
}

bool has(const std::string& msg, const std::string& part) {
  return msg.find(part) != std::string::npos;
}

const std::string kGood =
    modernTrace(modernNode(3, 2, "aten::relu", "aten::relu(Tensor self) -> Tensor",
                           R"([[5,6,0,4,4,"cpu"]])", "[[4]]", R"J(["Tensor(float)"])J"));

TEST(BadInput, GoodTraceReads) {
  TempDir dir;
  EXPECT_EQ(readTrace(dir.write("good.json", kGood)).nodes().size(), 3u);
  EXPECT_EQ(readTrace(dir.write("good.json.gz", gzip(kGood))).nodes().size(), 3u);
}

// readInt keeps a uint64's bits (pointers, seeds): an id above 2^63-1 became
// a negative one, read without a word.
TEST(BadInput, NodeIdsOutsideZeroTo63BitsAreRefused) {
  for (const std::string id : {"9223372036854775813", "-3"}) {
    std::string trace = modernTrace(modernNode(3, 2, "x", ""));
    trace.replace(trace.find("\"id\": 3"), 7, "\"id\": " + id);
    const std::string msg = errorReading(trace);
    EXPECT_TRUE(has(msg, "expected an integer for the node \"id\" (0 to 9223372036854775807)"))
        << msg;
    EXPECT_TRUE(has(msg, id)) << msg;
  }
}

// Element counts a collective cannot have: negative, or more bytes than 64
// bits hold (a 4e18-float all_reduce was predicted at 101 years); the largest
// recorded in the shared traces is 7.9M.
TEST(BadInput, CommCountsBeyond64BitsOfBytesAreRefused) {
  const auto comms = [](const std::string& attrs) {
    return modernTrace(modernNode(3, 2, "record_param_comms", "", "[]", "[]", "[]",
                                  R"(, {"name": "collective_name", "type": "string", "value": )"
                                  R"("allreduce"}, {"name": "dtype", "type": "string", "value": )"
                                  R"("Float"})" +
                                      attrs));
  };
  const std::string fine =
      comms(R"(, {"name": "in_msg_nelems", "type": "uint64", "value": 7875584})");
  TempDir dir;
  const Graph g = readTrace(dir.write("fine.json", fine));
  EXPECT_EQ(g.node(3).comm->in_msg_nelems, 7875584);
  std::string msg = errorReading(
      comms(R"(, {"name": "in_msg_nelems", "type": "uint64", "value": 4000000000000000000})"));
  EXPECT_TRUE(has(msg,
                  "node 3: in_msg_nelems 4000000000000000000: expected a count of elements "
                  "whose 4-byte Float values fit in 64 bits"))
      << msg;
  msg = errorReading(comms(R"(, {"name": "out_msg_nelems", "type": "int64", "value": -2})"));
  EXPECT_TRUE(has(msg, "node 3: out_msg_nelems -2")) << msg;
  msg = errorReading(comms(
      R"(, {"name": "in_split_size", "type": "string", "value": "[2000000000000000000, 2000000000000000000]"})"));
  EXPECT_TRUE(has(msg, "node 3: in_split_size's sum 4000000000000000000")) << msg;
}

TEST(BadInput, ProcessGroupsBeyondAnyJobAreRefused) {
  // A pg_size of 1e15 was predicted at 6e13 ms, and export listed its ranks without end.
  const auto comms = [](const std::string& attrs) {
    return modernTrace(modernNode(3, 2, "record_param_comms", "", "[]", "[]", "[]",
                                  R"(, {"name": "collective_name", "type": "string", "value": )"
                                  R"("allreduce"})" +
                                      attrs));
  };
  std::string msg =
      errorReading(comms(R"(, {"name": "pg_size", "type": "uint64", "value": 1000000000000000})"));
  EXPECT_TRUE(has(msg, "node 3: pg_size 1000000000000000: expected a group of 1 to 2^24 ranks"))
      << msg;
  msg = errorReading(
      comms(R"(, {"name": "pg_size", "type": "uint64", "value": 4}, )"
            R"({"name": "global_rank_start", "type": "uint64", "value": 1}, )"
            R"({"name": "global_rank_stride", "type": "uint64", "value": 1000000000})"));
  EXPECT_TRUE(has(msg,
                  "node 3: global_rank_start 1 + global_rank_stride 1000000000 x (pg_size 4 "
                  "- 1) is not a rank number"))
      << msg;
}

TEST(BadInput, ControlCharactersInNamesAreWrittenOut) {
  // Printed raw, "\x1b[2J" cleared the terminal of whoever inspected the trace.
  TempDir dir;
  const Graph g = readTrace(
      dir.write("ctrl.json", modernTrace(modernNode(3, 2, "my\\u001b[2Jlabel\\r", "") + ",\n" +
                                         modernNode(4, 2, "my\\u001b[2Jlabel\\r", "") + ",\n" +
                                         modernNode(5, 2, "clean", ""))));
  EXPECT_EQ(g.node(3).name.str(), "my\\x1b[2Jlabel\\x0d");
  EXPECT_EQ(g.node(4).name.str(), "my\\x1b[2Jlabel\\x0d");
  EXPECT_EQ(g.node(5).name.str(), "clean");
  std::string warnings;
  for (const std::string& w : g.warnings) warnings += w + "\n";
  EXPECT_TRUE(has(warnings,
                  "2 node name(s) hold control characters, written out as \\xNN "
                  "(first: node 3 'my\\x1b[2Jlabel\\x0d')"))
      << warnings;
}

TEST(BadInput, EmptyAndWhitespaceFiles) {
  EXPECT_TRUE(has(errorReading(""), "empty file"));
  EXPECT_TRUE(has(errorReading(" \n\t "), "empty file"));
}

TEST(BadInput, NotJson) {
  EXPECT_TRUE(has(errorReading("hello world"), "expected '{'"));
  EXPECT_TRUE(has(errorReading("\x01\x02\x03\x04", "binary.json"), "not JSON"));
}

TEST(BadInput, TopLevelArray) {
  EXPECT_TRUE(has(errorReading("[1, 2, 3]"), "top-level JSON array"));
}

TEST(BadInput, TruncatedAnywhereNeverReads) {
  // Cut the good trace at many points: every prefix must be refused.
  for (size_t cut = 1; cut + 1 < kGood.size(); cut += 7) {
    const std::string msg =
        errorReading(kGood.substr(0, cut), "cut" + std::to_string(cut) + ".json");
    EXPECT_FALSE(msg.empty()) << cut;
  }
}

TEST(BadInput, UnknownSchemaListsTheKnownOnes) {
  const std::string msg = errorReading(modernTrace("", "2.0.0"));
  EXPECT_TRUE(has(msg, "unknown execution-trace schema \"2.0.0\"")) << msg;
  EXPECT_TRUE(has(msg, "1.0.1, 1.0.2-chakra.0.0.4")) << msg;
  EXPECT_TRUE(has(errorReading(modernTrace("", "banana")), "known:"));
}

TEST(BadInput, MissingOrWronglyTypedKeys) {
  EXPECT_TRUE(has(errorReading(R"({"nodes": []})"), "missing key \"schema\""));
  EXPECT_TRUE(has(errorReading(R"({"schema": "1.0.1"})"), "missing key \"nodes\""));
  EXPECT_TRUE(has(errorReading(R"({"schema": 101, "nodes": []})"), "a string for \"schema\""));
  EXPECT_TRUE(has(errorReading(R"({"schema": "1.0.1", "nodes": {}})"), "an array for \"nodes\""));
  std::string bad_id = kGood;
  bad_id.replace(bad_id.find("\"id\": 3"), 7, "\"id\": \"3\"");
  const std::string msg = errorReading(bad_id);
  EXPECT_TRUE(has(msg, "byte ")) << msg;
  EXPECT_TRUE(has(msg, "an integer for the node \"id\"")) << msg;
  std::string no_parent = kGood;
  no_parent.replace(no_parent.find("\"ctrl_deps\": 2"), 14, "\"ctrl_depz\": 2");
  EXPECT_TRUE(has(errorReading(no_parent), "(node 3): expected key \"ctrl_deps\""));
}

TEST(BadInput, WrongValueShapes) {
  const std::string three_fields =
      modernTrace(modernNode(3, 2, "aten::relu", "aten::relu(Tensor self) -> Tensor", "[[5,6,0]]",
                             "[[4]]", R"J(["Tensor(float)"])J"));
  const std::string msg = errorReading(three_fields);
  EXPECT_TRUE(has(msg, "(node 3)")) << msg;
  EXPECT_TRUE(has(msg, "5 or 6 tensor fields")) << msg;
  const std::string count =
      modernTrace(modernNode(3, 2, "aten::relu", "", "[1, 2]", "[[],[]]", R"(["Int"])"));
  EXPECT_TRUE(has(errorReading(count), "at most 1 values"));
  const std::string int_as_string =
      modernTrace(modernNode(3, 2, "aten::relu", "", R"(["x"])", "[[]]", R"(["Int"])"));
  EXPECT_TRUE(has(errorReading(int_as_string), "an integer for Int"));
}

TEST(BadInput, DanglingParentNamesTheNode) {
  const std::string t = modernTrace(modernNode(3, 99, "aten::relu", ""));
  const std::string msg = errorReading(t);
  EXPECT_TRUE(has(msg, "node 3")) << msg;
  EXPECT_TRUE(has(msg, "parent 99")) << msg;
}

TEST(BadInput, ParentCycle) {
  const std::string t = modernTrace(modernNode(3, 4, "a", "") + ",\n" + modernNode(4, 3, "b", ""));
  EXPECT_TRUE(has(errorReading(t), "parent cycle"));
}

TEST(BadInput, DuplicateIdsAndNoRoot) {
  const std::string dup =
      modernTrace(modernNode(3, 2, "a", "") + ",\n" + modernNode(3, 2, "b", ""));
  EXPECT_TRUE(has(errorReading(dup), "node id 3 appears twice"));
  const std::string no_root = R"({"schema": "1.0.1", "nodes": [
    {"name": "x", "id": 2, "parent": 3, "inputs": [], "input_shapes": [], "input_types": []},
    {"name": "y", "id": 3, "parent": 2, "inputs": [], "input_shapes": [], "input_types": []}]})";
  EXPECT_TRUE(has(errorReading(no_root), "no root node"));
}

TEST(BadInput, ObserverBugsMissingCommaAndUnterminatedString) {
  std::string missing_comma = kGood;
  missing_comma.erase(missing_comma.find(", \"ctrl_deps\""), 1);
  const std::string msg = errorReading(missing_comma);
  EXPECT_TRUE(has(msg, "byte ")) << msg;
  std::string unterminated = kGood;
  unterminated.erase(unterminated.find("relu\"") + 4, 1);
  EXPECT_FALSE(errorReading(unterminated).empty());
}

TEST(BadInput, MalformedValuesOfUnknownKeysAreNotSkippedBlindly) {
  // Found by the differential fuzzer: On-Demand skips unknown values without
  // validating them, and a stray ']' there used to read as a good trace.
  std::string node_junk = kGood;
  node_junk.replace(node_junk.find("\"ctrl_deps\": 2"), 14, "\"ctrl_deps\": 2, \"junk [\": ]");
  // The reader's byte scanner sees the stray ']' close the node; a parser
  // of the whole text sees a missing value: either way, refused at a byte.
  const std::string junk_error = errorReading(node_junk);
  EXPECT_TRUE(has(junk_error, "expected a node object") || has(junk_error, "expected a JSON value"))
      << junk_error;
  EXPECT_TRUE(has(junk_error, ": byte ")) << junk_error;
  std::string top_junk = kGood;
  top_junk.replace(top_junk.find("\"pid\": 7"), 8, "\"pid\": 7, \"junk\": ]");
  EXPECT_FALSE(errorReading(top_junk).empty());
  // And a ']' right after a string value (On-Demand's skip closed the node).
  std::string bracket = kGood;
  bracket.replace(bracket.find("\"name\": \"aten::relu\""), 20, "\"name\": \"aten::relu\"]");
  EXPECT_FALSE(errorReading(bracket).empty());
  std::string attr_junk = kGood;
  attr_junk.replace(attr_junk.find("\"type\": \"uint64\""), 16, "\"type\": ]");
  EXPECT_FALSE(errorReading(attr_junk).empty());
}

TEST(BadInput, InvalidEscapesInStringsThatAreNotKeptAreRefused) {
  // The attribute "type" is read only to be checked; it is still checked.
  std::string bad_type = kGood;
  bad_type.replace(bad_type.find("\"type\": \"uint64\""), 16, "\"type\": \"uint\\x64\"");
  EXPECT_TRUE(has(errorReading(bad_type), "a valid string for the attribute type"));
}

TEST(BadInput, TrailingContentAfterTheObject) {
  EXPECT_TRUE(has(errorReading(kGood + " {}"), "end of the document"));
}

TEST(BadInput, CorruptAndTruncatedGzip) {
  const std::string gz = gzip(kGood);
  std::string corrupt = gz;
  for (size_t i = 20; i < corrupt.size() - 8; i += 13)
    corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
  EXPECT_TRUE(has(errorReading(corrupt, "corrupt.json.gz"), "gzip"));
  EXPECT_TRUE(has(errorReading(gz.substr(0, gz.size() / 2), "half.json.gz"), "gzip"));
  EXPECT_TRUE(has(errorReading(gz + "junk", "junk.json.gz"), "another gzip member"));
}

TEST(BadInput, MultiMemberGzipIsOneStream) {
  const size_t half = kGood.size() / 2;
  TempDir dir;
  const std::string path =
      dir.write("multi.json.gz", gzip(kGood.substr(0, half)) + gzip(kGood.substr(half)));
  EXPECT_EQ(readTrace(path).nodes().size(), 3u);
}

// Writes `bytes` into the FIFO `path` from another thread while it is read.
Graph readThroughFifo(const std::string& path, const std::string& bytes) {
  EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::thread writer([&] {
    if (FILE* f = std::fopen(path.c_str(), "wb")) {  // blocks until the reader opens it
      std::fwrite(bytes.data(), 1, bytes.size(), f);
      std::fclose(f);
    }
  });
  try {
    Graph g = readTrace(path);
    writer.join();
    return g;
  } catch (...) {
    writer.join();
    throw;
  }
}

TEST(PipedTraces, AFifoIsReadOnceGzipOrNot) {
  // Opened twice (to sniff the format, then to parse), a pipe lost its first
  // bytes ("not JSON") and a FIFO waited forever for its gone writer.
  TempDir dir;
  EXPECT_EQ(readThroughFifo(dir.path() + "/plain", kGood).nodes().size(), 3u);
  EXPECT_EQ(readThroughFifo(dir.path() + "/gz", gzip(kGood)).nodes().size(), 3u);
  try {
    readThroughFifo(dir.path() + "/bad", "not a trace");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_TRUE(has(e.what(), dir.path() + "/bad")) << e.what();
  }
}

TEST(BadInput, DirectoryIsNotATrace) {
  TempDir dir;
  try {
    readTrace(dir.path());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_TRUE(has(e.what(), "is a directory")) << e.what();
  }
}

TEST(BadInput, ADeviceIsNotATraceAndAPipeIs) {
  // /dev/zero was read without end (its memory grew ~30 MB/s).
  try {
    readTrace("/dev/zero");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_TRUE(has(e.what(), "/dev/zero: is a character device, not a file")) << e.what();
  }
  EXPECT_EQ(inputFileProblem("/dev/zero"), "is a character device");
  EXPECT_EQ(inputFileProblem("/nonexistent/trace.json"), "file does not exist");
  // A pipe is read, as `tracetwin inspect <(zcat t.json.gz)` reads one.
  TempDir dir;
  const std::string fifo = dir.path() + "/pipe.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(inputFileProblem(fifo), "");
  std::thread writer([&] {
    std::FILE* f = std::fopen(fifo.c_str(), "w");
    if (f == nullptr) return;
    std::fputs(kGood.c_str(), f);
    std::fclose(f);
  });
  const Graph g = readTrace(fifo);
  writer.join();
  EXPECT_EQ(g.nodes().size(), 3u);
}

TEST(BadInput, MissingFile) {
  try {
    readTrace("/nonexistent/trace.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_TRUE(has(e.what(), "/nonexistent/trace.json: cannot open"));
  }
}

// A relu over one float tensor [5,6,0,NUMEL,ITEMSIZE] of shape SHAPE.
std::string reluOver(const std::string& tensor, const std::string& shapes) {
  return modernTrace(modernNode(3, 2, "aten::relu", "aten::relu(Tensor self) -> Tensor",
                                "[" + tensor + "]", shapes, R"J(["Tensor(float)"])J"));
}

TEST(BadInput, TensorsThatCannotExistAreRefusedAtTheirNode) {
  // Found by a bad-input hunt: these read, predicted (a 2^32 x 2^32 shape at
  // 3.6e15 ms) and aborted the replay inside LibTorch.
  const std::string negative = errorReading(reluOver(R"([5,6,0,4,4,"cpu"])", "[[-2,-2]]"));
  EXPECT_TRUE(has(negative, "(node 3)") && has(negative, "a negative dimension")) << negative;
  EXPECT_TRUE(has(errorReading(reluOver(R"([5,6,0,4,4,"cpu"])", "[[4294967296,4294967296]]")),
                  "more elements than 64 bits count"));
  EXPECT_TRUE(has(errorReading(reluOver(R"([5,6,0,4096,4,"cpu"])", "[[32,7]]")),
                  "shape [32, 7] holds 224 elements, the tensor records numel 4096"));
  EXPECT_TRUE(has(errorReading(reluOver(R"([5,6,0,4,0,"cpu"])", "[[4]]")), "itemsize 0"));
  EXPECT_TRUE(has(errorReading(reluOver(R"([5,6,9223372036854775807,4,4,"cpu"])", "[[4]]")),
                  "beyond 64 bits"));
  // Two tensors and one shape: the second would have been read as a scalar.
  const std::string short_shapes = modernTrace(modernNode(
      3, 2, "aten::add", "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
      R"([[5,6,0,4,4,"cpu"],[7,8,0,4,4,"cpu"],1])", "[[4]]",
      R"J(["Tensor(float)","Tensor(float)","Int"])J"));
  EXPECT_TRUE(has(errorReading(short_shapes), "value 1 is a tensor and the shapes array ends"));
}

TEST(BadInput, TensorsWithoutRecordedShapesStillRead) {
  TempDir dir;
  // "shapes": [] records none (hand-written traces); undefined tensors have no shape.
  EXPECT_EQ(readTrace(dir.write("a.json", reluOver(R"([5,6,0,4,4,"cpu"])", "[]"))).nodes().size(),
            3u);
  EXPECT_EQ(readTrace(dir.write("b.json", reluOver(R"([5,0,0,0,0,""])", "[[]]"))).nodes().size(),
            3u);
}

TEST(BadInput, DeepNestingIsRefusedNotAStackOverflow) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string t =
      modernTrace(modernNode(3, 2, "a", "", "[" + deep + "]", "[[]]", R"(["Object"])"));
  EXPECT_TRUE(has(errorReading(t), "nested"));
}

}  // namespace
}  // namespace tracetwin::core
