// The timeline writer (timeline/trace_events.h) and the format checks
// (timeline/trace_checks.h): a golden small case, the nesting and sorting it
// guarantees, and every rule the checker holds a file to.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/errors.h"
#include "core/trace_reader.h"
#include "tests/support/paths.h"
#include "tests/support/traces.h"
#include "timeline/trace_checks.h"
#include "timeline/trace_events.h"

namespace tracetwin::timeline {
namespace {

using nlohmann::json;

Slice slice(std::string name, std::string cat, double start, double dur, core::NodeId node,
            std::string family = "") {
  Slice s;
  s.name = std::move(name);
  s.category = std::move(cat);
  s.start_us = start;
  s.dur_us = dur;
  s.node = node;
  s.family = std::move(family);
  return s;
}

// Two views of two ops: a replay with a kernel per op, a prediction with a
// CPU wait inside its second op and a kernel held back by another stream.
Timeline smallTimeline() {
  Timeline t;
  View& replay = t.views.emplace_back();
  replay.source = "replay";
  replay.detail = "replay on cuda";
  replay.iteration_us = 30;
  Track& cpu = replay.track(Track::Kind::kCpu, 0, "CPU thread (replay on cuda)");
  cpu.slices.push_back(slice("aten::mm", "cpu_op", 0, 10, 11, "gemm"));
  cpu.slices.push_back(slice("aten::relu", "cpu_op", 12.0004, 5, 12, "elementwise"));
  Track& stream = replay.track(Track::Kind::kDevice, 7, "stream 7");
  stream.slices.push_back(slice("gemm_kernel", "kernel", 4, 8, 11));
  stream.slices.push_back(slice("relu_kernel", "kernel", 14, 2, 12));
  View& prediction = t.views.emplace_back();
  prediction.source = "prediction";
  prediction.iteration_us = 28;
  Track& pcpu = prediction.track(Track::Kind::kCpu, 1, "CPU thread 1 (simulated)");
  pcpu.slices.push_back(slice("aten::mm", "cpu_op", 0, 9, 11, "gemm"));
  pcpu.slices.push_back(slice("aten::relu", "cpu_op", 9, 19, 12, "elementwise"));
  pcpu.slices.push_back(slice("wait", "wait", 15, 13, 12));
  Track& p0 = prediction.track(Track::Kind::kDevice, 0, "stream 0 (simulated)");
  p0.slices.push_back(slice("aten::mm", "kernel", 3, 9, 11, "gemm"));
  p0.slices.push_back(slice("wait", "wait", 14, 6, 12));
  p0.slices.push_back(slice("aten::relu", "kernel", 20, 8, 12, "elementwise"));
  return t;
}

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// TRACETWIN_UPDATE_GOLDEN=1 rewrites the golden file from the writer (then
// read the diff before committing it).
TEST(TimelineWriter, GoldenSmallCase) {
  WriteInfo info;
  const json doc = toTraceEvents(smallTimeline(), &info);
  const std::string golden_path = testing::sourcePath("tests/timeline/golden_small.json");
  if (std::getenv("TRACETWIN_UPDATE_GOLDEN") != nullptr)
    std::ofstream(golden_path) << doc.dump(1) << "\n";
  const json golden = json::parse(readText(golden_path));
  EXPECT_EQ(doc, golden) << doc.dump(1);
  EXPECT_EQ(info.slices, 10);
  EXPECT_EQ(info.flows, 4);  // each op to its kernel, in both views
  EXPECT_EQ(info.clipped, 0);
  EXPECT_TRUE(checkTraceEvents(doc).empty()) << checkTraceEvents(doc).front();
}

// Two ranks' predictions of one all_reduce: rank 0 ready at 2 us waits for
// rank 1 (ready at 6 us); both transfer 6-10 us. One arrow, rank 0 -> rank 1.
Timeline twoRankTimeline() {
  Timeline t;
  for (int rank : {0, 1}) {
    View& v = t.views.emplace_back();
    v.source = "prediction";
    v.rank = rank;
    v.iteration_us = 10;
    const core::NodeId mm = 20 + rank * 100, ar = 21 + rank * 100;  // each rank's own ids
    Track& cpu = v.track(Track::Kind::kCpu, 1, "CPU thread 1 (simulated)");
    cpu.slices.push_back(slice("aten::mm", "cpu_op", 0, rank == 0 ? 1 : 5, mm, "gemm"));
    cpu.slices.push_back(slice("c10d::allreduce_", "cpu_op", rank == 0 ? 1 : 5, 1, ar, "comm"));
    Track& s0 = v.track(Track::Kind::kDevice, 0, "stream 0 (simulated)");
    s0.slices.push_back(slice("aten::mm", "kernel", 0.5, rank == 0 ? 1 : 5, mm, "gemm"));
    Track& s1 = v.track(Track::Kind::kDevice, 1, "stream 1 (simulated)");
    if (rank == 0) s1.slices.push_back(slice("wait", "wait", 2, 4, ar));
    s1.slices.push_back(slice("c10d::allreduce_", "collective", 6, 4, ar, "comm"));
  }
  CollectiveLink link;
  link.name = "all_reduce #0 (default group)";
  link.members = {{0, 21}, {1, 121}};
  link.last = 1;
  t.collectives.push_back(link);
  t.notes.push_back("2 ranks simulated together");
  return t;
}

TEST(TimelineWriter, GoldenTwoRankCase) {
  WriteInfo info;
  const json doc = toTraceEvents(twoRankTimeline(), &info);
  const std::string golden_path = testing::sourcePath("tests/timeline/golden_two_ranks.json");
  if (std::getenv("TRACETWIN_UPDATE_GOLDEN") != nullptr)
    std::ofstream(golden_path) << doc.dump(1) << "\n";
  const json golden = json::parse(readText(golden_path));
  EXPECT_EQ(doc, golden) << doc.dump(1);
  EXPECT_EQ(info.slices, 9);  // rank 0: 2 ops, 2 kernels and the wait; rank 1: no wait
  EXPECT_EQ(info.flows, 5);  // op -> kernel: 2 per rank; and rank 0's collective -> rank 1's
  EXPECT_EQ(doc["otherData"]["notes"][0], "2 ranks simulated together");
  const std::set<core::NodeId> ids = {20, 21, 120, 121};
  CheckOptions check;
  check.nodes = &ids;
  EXPECT_TRUE(checkTraceEvents(doc, check).empty()) << checkTraceEvents(doc, check).front();
  // The arrow binds collectives: pointed at a gemm it is a problem.
  json broken = doc;
  for (json& e : broken["traceEvents"])
    if (e["ph"] == "f" && e["cat"] == "collective") e["tid"] = 2, e["ts"] = 3.0;  // rank 1's mm kernel
  const auto problems = checkTraceEvents(broken, check);
  ASSERT_FALSE(problems.empty());
  EXPECT_NE(problems.front().find("no collective"), std::string::npos) << problems.front();
}

TEST(TimelineWriter, TracksAreSortedAndNested) {
  Timeline t;
  View& v = t.views.emplace_back();
  v.source = "replay";
  Track& cpu = v.track(Track::Kind::kCpu, 0, "CPU");
  cpu.slices.push_back(slice("b", "cpu_op", 10, 10, 2));
  cpu.slices.push_back(slice("a", "cpu_op", 0, 12, 1));  // b starts inside a and ends after it
  cpu.slices.push_back(slice("inner", "wait", 1, 2, 1));
  WriteInfo info;
  const json doc = toTraceEvents(t, &info);
  std::vector<std::string> names;
  double b_dur = -1;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    names.push_back(e["name"]);
    if (e["name"] == "b") {
      b_dur = e["dur"];
      EXPECT_EQ(e["args"]["clipped_us"], 8.0);
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"a", "inner", "b"}));
  EXPECT_EQ(b_dur, 2.0);  // b started inside a and is cut at a's end
  EXPECT_EQ(info.clipped, 1);
  EXPECT_TRUE(checkTraceEvents(doc).empty());
}

TEST(TimelineWriter, GzipAndPlainFilesHoldTheSameDocument) {
  testing::TempDir dir;
  const Timeline t = smallTimeline();
  const WriteInfo plain = writeTimeline(dir.path() + "/t.json", t);
  const WriteInfo gz = writeTimeline(dir.path() + "/t.json.gz", t);
  EXPECT_GT(plain.bytes, gz.bytes);
  const json a = json::parse(readText(dir.path() + "/t.json"));
  const json b = json::parse(core::readMaybeGzipFile(dir.path() + "/t.json.gz"));
  EXPECT_EQ(a, b);
  // ".GZ" compresses too (T.JSON.GZ was written as plain text).
  const WriteInfo upper = writeTimeline(dir.path() + "/T.JSON.GZ", t);
  EXPECT_EQ(upper.bytes, gz.bytes);
  EXPECT_EQ(readText(dir.path() + "/T.JSON.GZ").substr(0, 2), "\x1f\x8b");
  EXPECT_THROW(writeTimeline("/nonexistent-dir/t.json", t), InputError);
}

// A FIFO: the writer re-opened the file to size it and waited for ever for a
// second writer once the reader had gone (a bad-input hunt).
TEST(TimelineWriter, AFifoIsWrittenOnceAndSizedByWhatWasWritten) {
  testing::TempDir dir;
  const std::string fifo = dir.path() + "/t.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = readText(fifo); });
  const WriteInfo info = writeTimeline(fifo, smallTimeline());
  reader.join();
  EXPECT_EQ(info.bytes, received.size());
  EXPECT_TRUE(checkTraceEvents(json::parse(received)).empty());
}

// ---- the checker finds what breaks the format ------------------------------

json validDoc() { return toTraceEvents(smallTimeline()); }

json& firstSlice(json& doc, const std::string& name) {
  for (json& e : doc["traceEvents"])
    if (e["ph"] == "X" && e["name"] == name) return e;
  throw std::runtime_error("no slice " + name);
}

bool mentions(const std::vector<std::string>& problems, const std::string& text) {
  for (const std::string& p : problems)
    if (p.find(text) != std::string::npos) return true;
  return false;
}

TEST(TimelineChecks, FindsEachBrokenRule) {
  EXPECT_TRUE(mentions(checkTraceEvents(json::array()), "not an object"));
  {
    json doc = validDoc();
    firstSlice(doc, "gemm_kernel")["dur"] = 11;  // ends inside relu_kernel: no longer nests
    EXPECT_TRUE(mentions(checkTraceEvents(doc), "slices must nest"));
  }
  {
    json doc = validDoc();
    firstSlice(doc, "relu_kernel")["ts"] = 1;  // before gemm_kernel, written after it
    EXPECT_TRUE(mentions(checkTraceEvents(doc), "not sorted"));
  }
  {
    json doc = validDoc();
    firstSlice(doc, "aten::mm")["ts"] = -1;
    EXPECT_TRUE(mentions(checkTraceEvents(doc), "must be >= 0"));
  }
  {
    json doc = validDoc();
    json& events = doc["traceEvents"];
    for (size_t i = 0; i < events.size(); ++i) {
      if (events[i]["ph"] == "f") {
        events.erase(i);
        break;
      }
    }
    EXPECT_TRUE(mentions(checkTraceEvents(doc), "expected one of each"));
  }
  {
    json doc = validDoc();
    for (json& e : doc["traceEvents"])
      if (e["ph"] == "s") e["ts"] = 1000;
    EXPECT_TRUE(mentions(checkTraceEvents(doc), "is inside no slice"));
  }
  {
    json doc = validDoc();
    json& events = doc["traceEvents"];
    for (size_t i = 0; i < events.size(); ++i) {
      if (events[i]["ph"] == "M" && events[i]["name"] == "thread_name") {
        events.erase(i);
        break;
      }
    }
    EXPECT_TRUE(mentions(checkTraceEvents(doc), "no thread_name"));
  }
  {
    json doc = validDoc();
    firstSlice(doc, "relu_kernel")["args"]["et_node"] = 11;  // the flow from relu now ends at mm
    EXPECT_TRUE(mentions(checkTraceEvents(doc), "binds slices of different nodes"));
  }
  {
    const std::set<core::NodeId> nodes{11};
    CheckOptions options;
    options.nodes = &nodes;
    EXPECT_TRUE(mentions(checkTraceEvents(validDoc(), options), "et_node 12 is not a node"));
  }
}

}  // namespace
}  // namespace tracetwin::timeline
