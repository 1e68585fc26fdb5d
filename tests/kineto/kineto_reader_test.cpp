#include "core/kineto/kineto_reader.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "core/errors.h"
#include "core/trace_reader.h"
#include "tests/support/paths.h"

namespace tracetwin::core::kineto {
namespace {

using testing::sharedTrace;

// Category counts below were taken with Python's json module over the same
// files (zcat FILE | python3 -c 'collections.Counter((e["ph"], e.get("cat")) ...)').
TEST(KinetoReader, ReadsLinearTraceCategories) {
  KinetoTrace t = readKinetoTrace(sharedTrace("linear_kineto.json.gz"));
  EXPECT_EQ(t.schema_version, 1);
  EXPECT_EQ(t.count(EventCategory::kCpuOp), 36998);
  EXPECT_EQ(t.count(EventCategory::kUserAnnotation), 80);
  EXPECT_EQ(t.count(EventCategory::kCudaRuntime), 14515);
  EXPECT_EQ(t.count(EventCategory::kKernel), 8716);
  EXPECT_EQ(t.count(EventCategory::kGpuMemset), 1640);
  EXPECT_EQ(t.count(EventCategory::kFlowStart), 10356);
  EXPECT_EQ(t.count(EventCategory::kFlowEnd), 14515);
  EXPECT_EQ(t.count(EventCategory::kMetadata), 36);
  ASSERT_EQ(t.devices.size(), 8u);
  EXPECT_EQ(t.devices[0].name, "NVIDIA GeForce RTX 2080 Ti");
  EXPECT_EQ(t.devices[0].num_sms, 68);
  EXPECT_FALSE(t.distributed.has_value());
  // The first event of the file: an autograd cpu_op with its args.
  const KinetoEvent& first = t.events.front();
  EXPECT_EQ(first.name, "autograd::engine::evaluate_function: NllLossBackward0");
  EXPECT_EQ(first.pid, 24248);
  EXPECT_EQ(first.tid, 24270);
  EXPECT_DOUBLE_EQ(first.ts, 1689180448563241.0);
  EXPECT_DOUBLE_EQ(first.dur, 595.0);
  EXPECT_EQ(first.external_id, 513);
  EXPECT_EQ(first.sequence_number, 65);
  EXPECT_EQ(first.record_function_id, kAbsent);
}

TEST(KinetoReader, ReadsDlrmDistributedInfoAndGpuArgs) {
  KinetoTrace t = readKinetoTrace(sharedTrace("dlrm_8rank/rank3.kineto.json.gz"));
  ASSERT_TRUE(t.distributed.has_value());
  EXPECT_EQ(t.distributed->backend, "nccl");
  EXPECT_EQ(t.distributed->rank, 3);
  EXPECT_EQ(t.distributed->world_size, 8);
  EXPECT_EQ(t.devices.at(0).name, "Tesla V100-SXM2-32GB");
  EXPECT_EQ(t.devices.at(0).num_sms, 80);
  int64_t memcpy_with_bytes = 0;
  for (const KinetoEvent& e : t.events) {
    if (isGpuActivity(e.category)) {
      EXPECT_NE(e.correlation, kAbsent) << e.index;
      EXPECT_EQ(e.stream, e.tid) << e.index;
    }
    memcpy_with_bytes += e.category == EventCategory::kGpuMemcpy && e.bytes > 0;
  }
  EXPECT_EQ(memcpy_with_bytes, t.count(EventCategory::kGpuMemcpy));
  EXPECT_GT(t.count(EventCategory::kGpuMemcpy), 0);
}

void expectInputError(const std::string& json, const std::string& needle) {
  try {
    parseKinetoTrace(json, "bad.json");
    FAIL() << "no error for: " << json;
  } catch (const InputError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("bad.json"), std::string::npos) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << what;
  }
}

TEST(KinetoReader, RejectsInvalidJsonWithByteOffset) {
  expectInputError(R"({"traceEvents": [{"ph": "X", "ts": 1,)", "byte offset");
  expectInputError("this is not json", "invalid JSON at byte offset");
  // The missing comma is at byte 28; nlohmann reports where the bad token ends.
  try {
    parseKinetoTrace(R"({"traceEvents": [{"ph": "X" "ts": 1}]})", "bad.json");
    FAIL();
  } catch (const InputError& e) {
    std::string what = e.what();
    auto pos = what.find("byte offset ");
    ASSERT_NE(pos, std::string::npos) << what;
    int offset = std::stoi(what.substr(pos + 12));
    EXPECT_GE(offset, 28) << what;
    EXPECT_LE(offset, 32) << what;
  }
  expectInputError("", "invalid JSON");
}

// Valid JSON that simdjson refuses without a position: an integer past 64
// bits. Digits inside strings, floats and -2^63 itself are not it.
TEST(KinetoReader, AnIntegerPast64BitsIsNamedAtItsOffset) {
  expectInputError(
      R"({"traceEvents": [{"name": "123456789012345678901", "ph": "X", "ts": 1.5e30, "x": -9223372036854775808, "Ev Idx": 100000000000000000000}]})",
      "byte offset 113: the integer 100000000000000000000 does not fit in 64 bits");
  expectInputError(R"({"traceEvents": [{"ph": "X", "ts": -9223372036854775809}]})",
                   "byte offset 35: the integer -9223372036854775809");
}

TEST(KinetoReader, RejectsWrongStructure) {
  expectInputError("[1, 2]", "expected a JSON object");
  expectInputError(R"({"schemaVersion": 1})", "missing key 'traceEvents'");
  expectInputError(R"({"traceEvents": {}})", "'traceEvents': expected an array");
  expectInputError(R"({"traceEvents": [3]})", "traceEvents[0]");
  expectInputError(R"({"traceEvents": [{"ts": 1}]})", "key 'ph'");
}

TEST(KinetoReader, RejectsWrongTypesNamingEventAndKey) {
  const std::string ok = R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":5,"dur":2})";
  EXPECT_NO_THROW(parseKinetoTrace("{\"traceEvents\":[" + ok + "]}", "ok.json"));
  expectInputError(R"({"traceEvents": [{"ph":"X","cat":"cpu_op","name":"a","ts":"5","dur":1}]})",
                   "traceEvents[0] key 'ts': expected a number");
  expectInputError(
      "{\"traceEvents\":[" + ok + R"(,{"ph":"X","cat":"cpu_op","name":1,"ts":5,"dur":1}]})",
      "traceEvents[1] key 'name': expected a string");
  expectInputError(R"({"traceEvents": [{"ph":"X","cat":"cpu_op","name":"a","ts":5}]})",
                   "key 'dur'");
  expectInputError(R"({"traceEvents": [{"ph":"X","cat":"cpu_op","name":"a","ts":5,"dur":-3}]})",
                   "expected a duration >= 0");
  // A kernel at 1e300 us made link's traced span 1e300 ms.
  expectInputError(R"({"traceEvents": [{"ph":"X","cat":"kernel","name":"k","ts":1e300,"dur":1}]})",
                   "traceEvents[0] key 'ts': expected a timestamp within 2^53 us");
  expectInputError(R"({"traceEvents": [{"ph":"X","cat":"kernel","name":"k","ts":5,"dur":1e20}]})",
                   "traceEvents[0] key 'dur': expected a duration within 2^53 us");
  expectInputError(
      R"({"traceEvents": [{"ph":"X","cat":"cpu_op","name":"a","ts":5,"dur":1,"args":{"External id":"x"}}]})",
      "key 'External id': expected an integer");
  expectInputError(
      R"({"traceEvents": [{"ph":"X","cat":"cpu_op","name":"a","ts":5,"dur":1,"args":[]}]})",
      "key 'args': expected an object");
  expectInputError(R"({"traceEvents": [], "distributedInfo": [1]})", "distributedInfo");
  expectInputError(R"({"traceEvents": [], "deviceProperties": {}})", "deviceProperties");
}

TEST(KinetoReader, AcceptsStringPidsAndFractionalTimestamps) {
  KinetoTrace t = parseKinetoTrace(
      R"({"traceEvents":[{"ph":"X","cat":"Trace","pid":"Spans","tid":"PyTorch Profiler","ts":1,"dur":9,"name":"x"},
          {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":7,"tid":8,"ts":10.5,"dur":2.25,
           "args":{"Record function id":42}}]})",
      "mem.json");
  ASSERT_EQ(t.events.size(), 1u);  // the "Trace" span is counted, not kept
  EXPECT_EQ(t.count(EventCategory::kOther), 1);
  EXPECT_DOUBLE_EQ(t.events[0].ts, 10.5);
  EXPECT_DOUBLE_EQ(t.events[0].end(), 12.75);
  EXPECT_EQ(t.events[0].record_function_id, 42);
  EXPECT_EQ(t.events[0].index, 1);
}

TEST(KinetoReader, TruncatedGzipIsAnInputError) {
  std::string bytes = readMaybeGzipFile(sharedTrace("dlrm_8rank/rank0.kineto.json.gz"));
  ASSERT_GT(bytes.size(), 1000u);
  std::ifstream in(sharedTrace("dlrm_8rank/rank0.kineto.json.gz"), std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string path = ::testing::TempDir() + "truncated.kineto.json.gz";
  std::ofstream(path, std::ios::binary) << gz.substr(0, gz.size() / 2);
  EXPECT_THROW(readKinetoTrace(path), InputError);
  // The decompressed text cut in half is invalid JSON with an offset near the cut.
  try {
    parseKinetoTrace(bytes.substr(0, bytes.size() / 2), "half.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("byte offset"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

// Cut and corrupted versions of a real trace either parse or raise
// InputError - never another exception, a crash or a hang. Deterministic:
// 150 cut points spread over the file and 300 seeded single-byte changes.
TEST(KinetoReader, CutOrCorruptedTraceOnlyEverRaisesInputError) {
  const std::string bytes = readMaybeGzipFile(sharedTrace("dlrm_8rank/rank7.kineto.json.gz"));
  auto parseOrInputError = [](const std::string& text, const std::string& what) {
    try {
      parseKinetoTrace(text, what);
    } catch (const InputError&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << ": unexpected " << e.what();
    }
  };
  for (size_t i = 1; i <= 150; ++i) {
    size_t cut = bytes.size() * i / 151;
    parseOrInputError(bytes.substr(0, cut), "cut at " + std::to_string(cut));
  }
  const std::string alphabet = "{}[],:\"-0e.x ";
  uint64_t state = 12345;
  auto next = [&state] { return state = state * 6364136223846793005ULL + 1442695040888963407ULL; };
  for (int i = 0; i < 300; ++i) {
    std::string text = bytes;
    size_t pos = static_cast<size_t>(next() >> 11) % text.size();
    text[pos] = alphabet[static_cast<size_t>(next() >> 33) % alphabet.size()];
    parseOrInputError(text, "byte " + std::to_string(pos));
  }
}

TEST(KinetoReader, MissingFileIsAnInputError) {
  EXPECT_THROW(readKinetoTrace(sharedTrace("no_such_file.json")), InputError);
}

}  // namespace
}  // namespace tracetwin::core::kineto
