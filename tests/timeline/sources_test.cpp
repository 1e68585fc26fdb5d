// Views from real sources (timeline/sources.h, cli/timeline_replay.h): the
// original of a GPU run from its Kineto trace, predictions on a GPU and a CPU,
// a replay (hand-made result: timings are never asserted) and a rank's
// report. Every written file must keep the format's rules with every slice's
// node id resolvable in its trace.
#include "timeline/sources.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <tuple>

#include "cli/timeline_replay.h"
#include "core/kineto/kineto_reader.h"
#include "core/kineto/linker.h"
#include "core/trace_reader.h"
#include "predictors/models/model_set.h"
#include "replay/result_json.h"
#include "tests/support/paths.h"
#include "timeline/trace_checks.h"
#include "timeline/trace_events.h"

namespace tracetwin::timeline {
namespace {

using nlohmann::json;

std::set<core::NodeId> idsOf(const core::Graph& g) {
  std::set<core::NodeId> ids;
  for (const core::Node& n : g.nodes()) ids.insert(n.id);
  return ids;
}

std::vector<std::string> problems(const Timeline& t, const core::Graph& g) {
  const std::set<core::NodeId> ids = idsOf(g);
  CheckOptions options;
  options.nodes = &ids;
  return checkTraceEvents(toTraceEvents(t), options);
}

int64_t countSlices(const View& v, Track::Kind kind, const std::string& category = "") {
  int64_t n = 0;
  for (const Track& t : v.tracks) {
    if (t.kind != kind) continue;
    for (const Slice& s : t.slices) n += category.empty() || s.category == category;
  }
  return n;
}

TEST(OriginalView, GpuRunFromItsKinetoTrace) {
  const core::Graph g = core::readTrace(testing::sharedTrace("linear_1.0.1_et.json.gz"));
  const std::string kineto = testing::sharedTrace("linear_kineto.json.gz");
  const auto linked = core::kineto::linkTraces(g, core::kineto::readKinetoTrace(kineto));
  Timeline t;
  t.views.push_back(originalView(g, linked, kineto));
  const View& v = t.views[0];
  EXPECT_EQ(countSlices(v, Track::Kind::kCpu), linked.matched_ops);
  EXPECT_GT(countSlices(v, Track::Kind::kDevice), 0);
  for (const Track& track : v.tracks) {
    for (const Slice& s : track.slices) {
      if (track.kind == Track::Kind::kCpu) {
        EXPECT_EQ(s.name, g.node(s.node).name);
      }
      EXPECT_GE(s.start_us, 0);
    }
  }
  WriteInfo info;
  toTraceEvents(t, &info);
  EXPECT_EQ(
      info.flows, countSlices(v, Track::Kind::kDevice) -
                      [&] {  // kernels a label launched have no op slice to come from
                        int64_t n = 0;
                        for (const auto& l : linked.labels) n += int64_t(l.kernels.size());
                        return n;
                      }());
  const auto p = problems(t, g);
  EXPECT_TRUE(p.empty()) << p.front();
}

predictors::Prediction predictWithSchedule(const core::Graph& g, const std::string& models) {
  predictors::PredictOptions opts;
  opts.keep_schedule = true;
  return predictors::predictGraph(g, predictors::ModelSet::load(testing::sourcePath(models)), opts);
}

TEST(PredictionView, GpuTraceHasStreamsAndKernels) {
  // DLRM rank 0: collectives on a stream of their own, two CPU threads.
  const core::Graph g = core::readTrace(testing::sharedTrace("dlrm_8rank/rank0.et.json.gz"));
  const predictors::Prediction p = predictWithSchedule(g, "data/models/h200");
  ASSERT_EQ(p.schedule.size(), p.per_op.size());
  Timeline t;
  t.views.push_back(predictionView(p));
  const View& v = t.views[0];
  int64_t kernels = 0;
  for (const auto& o : p.per_op) kernels += std::max(o.kernels, 0);
  EXPECT_EQ(countSlices(v, Track::Kind::kDevice, "kernel") +
                countSlices(v, Track::Kind::kDevice, "collective"),
            kernels);
  EXPECT_EQ(countSlices(v, Track::Kind::kDevice, "collective"), 13 * 1)  // one launch each
      << "13 collectives per DLRM rank";
  EXPECT_EQ(countSlices(v, Track::Kind::kCpu, "cpu_op"), int64_t(p.per_op.size()));
  double last_end = 0;
  for (const Track& track : v.tracks)
    for (const Slice& s : track.slices) last_end = std::max(last_end, s.start_us + s.dur_us);
  EXPECT_NEAR(last_end, p.iteration_ms * 1000, 1e-6 * p.iteration_ms * 1000 + 1e-6);
  WriteInfo info;
  toTraceEvents(t, &info);
  EXPECT_EQ(info.clipped, 0) << "the simulation's spans nest by construction";
  const auto problems_found = problems(t, g);
  EXPECT_TRUE(problems_found.empty()) << problems_found.front();
}

// Three ops simulated by hand: a kernel on stream 0; a collective on stream 1
// held back until stream 0 drains; a synchronising collective held back by
// the slowest rank, the CPU waiting for it.
TEST(PredictionView, WaitsAreSlicesOfTheirOwn) {
  std::vector<predictors::SimOp> ops(3);
  for (auto& op : ops) {
    op.thread = 1;
    op.t2 = op.t3 = op.t4 = 1;
  }
  ops[0].device_us = 50;
  ops[1].stream = ops[2].stream = 1;
  ops[1].is_comm = ops[2].is_comm = true;
  ops[1].device_us = ops[2].device_us = 10;
  ops[1].wait_stream = 0;
  ops[2].rank_arrival_us = 100;
  ops[2].sync = true;
  predictors::SimResult sim = predictors::simulate(ops, true);
  predictors::Prediction p;
  p.iteration_ms = sim.iteration_us / 1000;
  const char* names[] = {"aten::mm", "record_param_comms", "record_param_comms"};
  for (size_t i = 0; i < ops.size(); ++i) {
    predictors::OpPrediction o;
    o.id = core::NodeId(10 + i);
    o.name = names[i];
    o.family = i == 0 ? "gemm" : "comm";
    o.model = "test";
    p.per_op.push_back(o);
    p.schedule.push_back({o.id, 1, ops[i].stream, false, sim.schedule[i]});
  }
  Timeline t;
  t.views.push_back(predictionView(p));
  auto spans = [&](Track::Kind kind, int64_t id) {
    std::vector<std::tuple<std::string, double, double>> out;
    for (const Track& track : t.views[0].tracks)
      if (track.kind == kind && track.id == id)
        for (const Slice& s : track.slices)
          out.emplace_back(s.name, s.start_us, s.start_us + s.dur_us);
    return out;
  };
  using Spans = std::vector<std::tuple<std::string, double, double>>;
  EXPECT_EQ(spans(Track::Kind::kCpu, 1), (Spans{{"aten::mm", 0, 3},
                                                {"record_param_comms", 3, 6},
                                                {"record_param_comms", 6, 110},
                                                {"wait", 9, 110}}));
  EXPECT_EQ(spans(Track::Kind::kDevice, 0), (Spans{{"aten::mm", 2, 52}}));
  EXPECT_EQ(spans(Track::Kind::kDevice, 1), (Spans{{"wait", 5, 52},
                                                   {"record_param_comms", 52, 62},
                                                   {"wait", 62, 100},
                                                   {"record_param_comms", 100, 110}}));
  WriteInfo info;
  const json doc = toTraceEvents(t, &info);
  EXPECT_EQ(info.flows, 3);
  EXPECT_EQ(info.clipped, 0);
  const auto problems_found = checkTraceEvents(doc);
  EXPECT_TRUE(problems_found.empty()) << problems_found.front();
}

TEST(PredictionView, CpuTraceIsOneThreadOfOps) {
  const core::Graph g = core::readTrace(testing::dataPath("cnn.et.json.gz"));
  const predictors::Prediction p = predictWithSchedule(g, "data/models/host");
  std::unordered_map<core::NodeId, Measured> measured;
  for (const auto& o : p.per_op) measured[o.id] = {o.predicted_us / 2};  // a 100% error each
  Timeline t;
  t.views.push_back(predictionView(p, &measured));
  const View& v = t.views[0];
  EXPECT_EQ(countSlices(v, Track::Kind::kDevice), 0);
  ASSERT_EQ(v.tracks.size(), 1u);
  for (const Slice& s : v.tracks[0].slices) {
    EXPECT_FALSE(s.args["model"].get<std::string>().empty());
    if (s.args.contains("error_pct")) {
      EXPECT_NEAR(s.args["error_pct"].get<double>(), 100.0, 1e-9);
    }
  }
  const auto problems_found = problems(t, g);
  EXPECT_TRUE(problems_found.empty()) << problems_found.front();
}

// A replay result by hand: three ops, two kernels of the first and one of
// the third on two streams, a collective that waited for its peers.
replay::ReplayResult fakeReplay() {
  replay::ReplayResult r;
  r.device = "cuda:0";
  r.iterations_ms = {0.05, 0.04};
  r.iteration_ms_median = 0.045;
  auto op = [&](core::NodeId id, const char* name, double start, double last, double median) {
    replay::OpMeasurement m;
    m.id = id;
    m.name = name;
    m.family = "elementwise";
    m.start_us = start;
    m.last_cpu_us = last;
    m.cpu_us = median;
    r.per_op.push_back(m);
  };
  op(3, "aten::add", 2, 5, 6);
  op(4, "record_param_comms", 8, 20, 21);
  op(5, "aten::mul", 30, 4, 4);
  r.kernels = {{"add_kernel_a", 7, 0, 3, 3, "kernel"},
               {"add_kernel_b", 7, 3, 2, 3, "kernel"},
               {"Memcpy DtoD", 13, 5, 1, core::kNoNode, "memcpy"},
               {"mul_kernel", 7, 31, 2, 5, "kernel"}};
  replay::dist::DistributedSummary d;
  d.collectives.push_back({4, "all_reduce", "", 1024, 12.0, 6.0});
  r.distributed = d;
  return r;
}

TEST(ReplayView, OpsKernelsAndWaits) {
  const replay::ReplayResult r = fakeReplay();
  const View v = cli::replayView(r);
  ASSERT_EQ(v.tracks.size(), 3u);  // the CPU thread, streams 7 and 13
  const Track& cpu = v.tracks[0];
  ASSERT_EQ(cpu.slices.size(), 4u);    // three ops and the collective's wait
  EXPECT_EQ(cpu.slices[0].dur_us, 5);  // the last iteration's time, not the median
  EXPECT_EQ(cpu.slices[3].name, "wait");
  EXPECT_EQ(cpu.slices[3].start_us, 8);
  EXPECT_EQ(cpu.slices[3].dur_us, 12);
  // The first kernel starts with its op (at 2 us): every kernel moves by 2.
  const Track& s7 = v.tracks[1];
  EXPECT_EQ(s7.slices[0].start_us, 2);
  EXPECT_EQ(s7.slices[2].start_us, 33);
  EXPECT_EQ(v.tracks[2].slices[0].category, "gpu_memcpy");
  Timeline t;
  t.views.push_back(v);
  WriteInfo info;
  const json doc = toTraceEvents(t, &info);
  EXPECT_EQ(info.flows, 3);  // the memcpy has no op
  const auto p = checkTraceEvents(doc);
  EXPECT_TRUE(p.empty()) << p.front();
}

TEST(ReplayView, RankReportGivesTheSameOps) {
  const replay::ReplayResult r = fakeReplay();
  json report = replay::replayResultToJson(r);
  const View from_report = cli::replayViewFromReport(report, 3);
  const View direct = cli::replayView(r, 3);
  EXPECT_EQ(from_report.rank, 3);
  ASSERT_EQ(from_report.tracks.size(), 1u);  // reports carry no kernels
  ASSERT_EQ(from_report.tracks[0].slices.size(), direct.tracks[0].slices.size());
  for (size_t i = 0; i < direct.tracks[0].slices.size(); ++i) {
    EXPECT_EQ(from_report.tracks[0].slices[i].name, direct.tracks[0].slices[i].name);
    EXPECT_EQ(from_report.tracks[0].slices[i].start_us, direct.tracks[0].slices[i].start_us);
    EXPECT_EQ(from_report.tracks[0].slices[i].dur_us, direct.tracks[0].slices[i].dur_us);
  }
  report.erase("per_op");
  EXPECT_THROW(cli::replayViewFromReport(report, 3), InputError);
}

TEST(Views, RanksAreGroupsOfTheirOwn) {
  Timeline t;
  const replay::ReplayResult r = fakeReplay();
  for (int rank : {0, 1}) t.views.push_back(cli::replayView(r, rank));
  const json doc = toTraceEvents(t);
  std::map<int, std::string> names;
  std::map<int, int> sort;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "process_name") names[e["pid"]] = e["args"]["name"];
    if (e["name"] == "process_sort_index") sort[e["pid"]] = e["args"]["sort_index"];
  }
  EXPECT_EQ(names[1], "rank 0 · replay");
  EXPECT_EQ(names[2], "rank 1 · replay");
  EXPECT_LT(sort[1], sort[2]);
}

// The 2-rank Gloo capture predicted together: each rank its own group, its
// collectives linked to the member the group waited for.
TEST(Views, RanksPredictedTogetherAreLinkedByTheirCollectives) {
  std::deque<core::Graph> graphs;
  std::vector<predictors::RankInput> inputs;
  std::set<core::NodeId> ids;
  for (int r : {0, 1}) {
    graphs.push_back(core::readTrace(
        testing::dataPath("distributed/ddp_mlp.rank" + std::to_string(r) + ".et.json.gz")));
    for (const core::Node& n : graphs.back().nodes()) ids.insert(n.id);
    predictors::RankInput in;
    in.graph = &graphs.back();
    in.start_us = r == 1 ? 500.0 : 0.0;  // rank 1 enters late: rank 0 waits for it
    inputs.push_back(std::move(in));
  }
  const auto models = predictors::ModelSet::load(testing::sourcePath("data/models/host"));
  const predictors::MultiRankPrediction plain = predictors::predictRanks(inputs, models);
  EXPECT_TRUE(plain.ranks[0].prediction.schedule.empty()) << "off unless asked for";
  predictors::MultiRankOptions options;
  options.keep_schedule = true;
  const predictors::MultiRankPrediction m = predictors::predictRanks(inputs, models, options);
  ASSERT_EQ(m.ranks.size(), 2u);
  ASSERT_FALSE(m.collectives.empty());
  for (const auto& r : m.ranks) {
    EXPECT_EQ(r.prediction.schedule.size(), r.prediction.per_op.size());
    EXPECT_DOUBLE_EQ(r.iteration_ms, plain.ranks[size_t(r.rank)].iteration_ms)
        << "keeping the schedule changes no figure";
  }
  const Timeline t = ranksTimeline(m);
  ASSERT_EQ(t.views.size(), 2u);
  EXPECT_EQ(t.views[0].rank, 0);
  EXPECT_EQ(t.views[1].rank, 1);
  ASSERT_EQ(t.collectives.size(), m.collectives.size());
  CheckOptions check;
  check.nodes = &ids;
  WriteInfo info;
  const json doc = toTraceEvents(t, &info);
  const std::vector<std::string> found = checkTraceEvents(doc, check);
  EXPECT_TRUE(found.empty()) << found.front();
  // One arrow per collective, from the member that waited to the last one
  // (pid = view + 1): rank 1 entered 500 us late, so rank 0 waits for it.
  std::map<int64_t, std::pair<int64_t, int64_t>> arrows;  // id -> (from pid, to pid)
  for (const json& e : doc["traceEvents"]) {
    if (e.value("cat", "") != "collective" || (e["ph"] != "s" && e["ph"] != "f")) continue;
    auto& a = arrows[e["id"].get<int64_t>()];
    (e["ph"] == "s" ? a.first : a.second) = e["pid"].get<int64_t>();
  }
  ASSERT_EQ(arrows.size(), m.collectives.size());
  EXPECT_EQ(m.collectives[0].last_rank, 1);
  EXPECT_EQ(arrows.begin()->second, std::make_pair(int64_t(1), int64_t(2)));
  for (const auto& [id, a] : arrows) EXPECT_NE(a.first, a.second) << "flow " << id;
}

}  // namespace
}  // namespace tracetwin::timeline
