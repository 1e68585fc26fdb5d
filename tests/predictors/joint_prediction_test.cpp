// Ranks of real jobs predicted together (predictors/simulation/joint_prediction.h):
// the 8 DLRM ranks with their recorded kernels and entries, the bundled
// 2-rank Gloo captures, one trace for many identical ranks.
#include "predictors/simulation/joint_prediction.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <deque>

#include "core/errors.h"
#include "core/kineto/kineto_reader.h"
#include "core/kineto/linker.h"
#include "core/kineto/overheads.h"
#include "core/trace_reader.h"
#include "predictors/comm/comm_model.h"
#include "predictors/comm/topology.h"
#include "predictors/kernels/analytic_models.h"
#include "tests/support/graphs.h"
#include "tests/support/paths.h"
#include "tests/support/values.h"

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;

// Analytic models of every family a trace here has, on `d`.
ModelSet jointAnalyticModels(const DeviceSpec& d) {
  ModelSet set;
  set.device = d;
  set.setModel("gemm", std::make_shared<RooflineModel>());
  set.setModel("conv", std::make_shared<RooflineModel>());
  set.setModel("embedding_bag", std::make_shared<CacheModel>());
  for (const char* f : {"elementwise", "reduction", "norm", "softmax", "copy"})
    set.setModel(f, BandwidthCurveModel::fromDevice(d));
  set.setModel("view", familyEntry("view").fallback(d));
  set.setModel("comm", AlphaBetaModel::fromDevice(d));
  return set;
}

struct Dlrm {
  std::deque<core::Graph> graphs;
  std::vector<RankInput> inputs;
  std::vector<double> recorded_ms;  // each rank's linked iteration
};

// The 8 DLRM ranks (V100s sharing a host clock) with the kernel times and
// the iteration entries their Kineto traces recorded.
Dlrm dlrmRanks() {
  Dlrm d;
  for (int r = 0; r < 8; ++r) {
    const std::string stem = sharedTrace("dlrm_8rank/rank" + std::to_string(r));
    d.graphs.push_back(core::readTrace(stem + ".et.json.gz"));
    const auto linked = core::kineto::linkTraces(
        d.graphs.back(), core::kineto::readKinetoTrace(stem + ".kineto.json.gz"));
    RankInput in;
    in.graph = &d.graphs.back();
    for (const auto& op : linked.ops) {
      if (op.matched) in.opts.recorded_kernels[op.id] = {op.device_us, int64_t(op.kernels.size())};
    }
    in.start_us = linked.iteration_start_us;
    d.inputs.push_back(std::move(in));
    d.recorded_ms.push_back(linked.iteration_ms);
  }
  return d;
}

TEST(JointPrediction, DlrmRanksWaitForTheLastToEnterAsRecorded) {
  const Dlrm d = dlrmRanks();
  const ModelSet models = jointAnalyticModels(loadDeviceSpec(sourcePath("configs/devices/h100.yaml")));
  const MultiRankPrediction m = predictRanks(d.inputs, models);
  ASSERT_EQ(m.ranks.size(), 8u);
  ASSERT_EQ(m.collectives.size(), 8u);  // 5 all_to_all(v), 3 all_reduce; the 5 waits are local
  // Rank 7 entered last (7.5 ms after rank 1) and was last at every
  // collective: nobody waits for another rank than rank 7, which waits not.
  EXPECT_EQ(m.straggler, 7);
  EXPECT_DOUBLE_EQ(m.ranks[7].wait_ms, 0.0);
  for (const CollectiveReport& c : m.collectives) {
    EXPECT_EQ(c.last_rank, 7) << c.name << " #" << c.position;
    EXPECT_EQ(c.transfer_from, "recorded (shortest member kernel)");
  }
  // The first all_to_allv's kernels ran 7.6 ms on rank 1 and 10 us on rank
  // 7: the transfer is rank 7's.
  EXPECT_DOUBLE_EQ(m.collectives[0].transfer_us, 10.0);
  EXPECT_EQ(m.slowest_rank, 1);
  // Every rank leaves the last all-reduce when rank 7 does, so the ranks end
  // within their tails after it (the recorded ends agree within 0.92 ms) and
  // a rank's step is longer by its entry before rank 7's: the spread of the
  // steps is the entries' (recorded: 12.509 .. 19.901 ms, entries 7.513 ms
  // apart). At the first all_to_allv each rank waits for rank 7's entry.
  const double end7 = m.ranks[7].start_ms + m.ranks[7].iteration_ms;
  for (size_t r = 0; r < 8; ++r) {
    const double entry_gap = m.ranks[7].start_ms - m.ranks[r].start_ms;
    EXPECT_NEAR(m.ranks[r].start_ms + m.ranks[r].iteration_ms, end7, 0.1) << "rank " << r;
    EXPECT_NEAR(d.inputs[r].start_us / 1000 + d.recorded_ms[r],
                d.inputs[7].start_us / 1000 + d.recorded_ms[7], 0.92)
        << "rank " << r;
    EXPECT_NEAR(m.collectives[0].wait_us[r] / 1000, entry_gap, 0.05 * entry_gap + 0.01)
        << "rank " << r;
    EXPECT_GE(m.ranks[r].wait_ms, m.collectives[0].wait_us[r] / 1000 - 1e-9) << "rank " << r;
  }
  EXPECT_NEAR(m.ranks[1].iteration_ms - m.ranks[7].iteration_ms, 7.513, 0.1);
}

// The CPU overheads of every rank but `left_out`, as `link --ranks
// --overheads-out` measures them.
OverheadTable overheadsWithout(int left_out) {
  core::kineto::OverheadCollector c;
  for (int r = 0; r < 8; ++r) {
    if (r == left_out) continue;
    const std::string stem = sharedTrace("dlrm_8rank/rank" + std::to_string(r));
    const core::Graph g = core::readTrace(stem + ".et.json.gz");
    c.addTrace(core::kineto::readKinetoTrace(stem + ".kineto.json.gz"),
               core::kineto::operatorsOfGraph(g));
  }
  return OverheadTable::fromJson(nlohmann::json::parse(core::kineto::overheadsToJson(c.finish())),
                                 "dlrm overheads");
}

TEST(JointPrediction, DlrmStepsFromTheOtherRanksMeanOverheads) {
  // Each rank's step against its recorded one, with the recorded kernels and
  // entries and the mean CPU overheads of the other seven ranks (leave one
  // out). Measured 2026-11-26: -4.1 .. -10.2%, geomean |error| 6.3%; with
  // medians -20.8 .. -33.0% (the rare long gaps between ops are Python's
  // work, a quarter of the step, and the median leaves them out).
  Dlrm d = dlrmRanks();
  for (int r = 0; r < 8; ++r) {
    d.inputs[size_t(r)].opts.overheads = overheadsWithout(r);
    d.inputs[size_t(r)].opts.overhead_statistic = OverheadStatistic::kMean;
  }
  const ModelSet models = jointAnalyticModels(loadDeviceSpec(sourcePath("configs/devices/h100.yaml")));
  const MultiRankPrediction m = predictRanks(d.inputs, models);
  double log_sum = 0;
  for (size_t r = 0; r < 8; ++r) {
    const double error = m.ranks[r].iteration_ms / d.recorded_ms[r] - 1;
    EXPECT_LT(std::abs(error), 0.11) << "rank " << r << ": " << m.ranks[r].iteration_ms
                                     << " ms against " << d.recorded_ms[r];
    log_sum += std::log(std::abs(error));
  }
  EXPECT_LT(std::exp(log_sum / 8), 0.07);
}

TEST(JointPrediction, RanksEnteringTogetherHaveNothingToWaitFor) {
  Dlrm d = dlrmRanks();
  for (RankInput& in : d.inputs) in.start_us = 0;
  const ModelSet models = jointAnalyticModels(loadDeviceSpec(sourcePath("configs/devices/h100.yaml")));
  const MultiRankPrediction m = predictRanks(d.inputs, models);
  // The same program on every rank, kernels within 1.09x: the steps agree
  // to a fraction of the recorded 7.4 ms spread.
  double lo = 1e9, hi = 0;
  for (const RankReport& r : m.ranks) {
    lo = std::min(lo, r.iteration_ms);
    hi = std::max(hi, r.iteration_ms);
  }
  EXPECT_LT(hi - lo, 0.5);
}

TEST(JointPrediction, TracesOfDifferentJobsAreRefused) {
  std::deque<core::Graph> graphs;
  graphs.push_back(core::readTrace(dataPath("distributed/ddp_mlp.rank0.et.json.gz")));
  graphs.push_back(core::readTrace(dataPath("distributed/dlrm_tw.rank1.et.json.gz")));
  std::vector<RankInput> in(2);
  in[0].graph = &graphs[0];
  in[1].graph = &graphs[1];
  const ModelSet models = jointAnalyticModels(loadDeviceSpec(dataPath("models/host/device.yaml")));
  try {
    predictRanks(in, models);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("not the ranks of one job"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("rank 1 differs from rank 0"));
  }
}

TEST(JointPrediction, GlooCollectivesOnACpuRunBesideTheThreadAndEndTogether) {
  std::deque<core::Graph> graphs;
  std::vector<RankInput> in(2);
  for (int r = 0; r < 2; ++r) {
    graphs.push_back(
        core::readTrace(dataPath("distributed/ddp_mlp.rank" + std::to_string(r) + ".et.json.gz")));
    in[size_t(r)].graph = &graphs.back();
  }
  const ModelSet models = jointAnalyticModels(loadDeviceSpec(dataPath("models/host/device.yaml")));
  const MultiRankPrediction m = predictRanks(in, models);
  ASSERT_FALSE(m.collectives.empty());
  for (const CollectiveReport& c : m.collectives) {
    EXPECT_EQ(c.members, (std::vector<int64_t>{0, 1}));
    EXPECT_GT(c.transfer_us, 0.0) << c.name;  // a 2-rank group moves bytes
  }
  for (const RankReport& r : m.ranks) {
    EXPECT_GT(r.comm_ms, 0.0);
    EXPECT_GT(r.compute_ms, 0.0);
    EXPECT_LE(r.exposed_comm_ms, r.iteration_ms);
  }
  // The CPU ranks share the host's cores and its memory bandwidth (the
  // bundled host models measured its contention), and the report says so.
  EXPECT_TRUE(std::any_of(m.notes.begin(), m.notes.end(), [](const std::string& n) {
    return n.find("ranks share 2 cores") != std::string::npos;
  }));
  EXPECT_TRUE(std::any_of(m.notes.begin(), m.notes.end(), [](const std::string& n) {
    return n.find("contend for memory bandwidth") != std::string::npos;
  }));
  EXPECT_TRUE(std::any_of(m.notes.begin(), m.notes.end(), [](const std::string& n) {
    return n.find("share the last-level cache in proportion to their traffic") !=
               std::string::npos &&
           n.find("(0.50, 0.50)") != std::string::npos;  // identical ranks: halves
  }));
  // On one core each the ranks take longer; on hosts of their own no longer
  // than sharing 2 cores.
  MultiRankOptions one_core, apart;
  one_core.host_cores = 1;
  apart.host_cores = -1;
  const MultiRankPrediction tight = predictRanks(in, models, one_core);
  const MultiRankPrediction alone = predictRanks(in, models, apart);
  EXPECT_GT(tight.iteration_ms, m.iteration_ms);
  EXPECT_LE(alone.iteration_ms, m.iteration_ms + 1e-9);
}

// X and Y of 12 MiB each, read in turn: A(X) B(Y) C(X), every iteration.
// The LRU traffic between Y's touches is X twice (24 MiB; cache_reuse.h
// counts a storage in every op that touches it), and Y's 12 MiB fit beside
// it in the bundled host's 44.4 MiB reuse capacity; in the 22.2 MiB a
// co-located twin leaves, none of Y and part of X survive.
core::Graph twoStreams() {
  core::Node a = opNode("aten::add_", {mibTensor(12, 1), mibTensor(12, 1)}, {mibTensor(12, 1)});
  core::Node b = opNode("aten::add_", {mibTensor(12, 2), mibTensor(12, 2)}, {mibTensor(12, 2)});
  core::Node c = opNode("aten::add_", {mibTensor(12, 1), mibTensor(12, 1)}, {mibTensor(12, 1)});
  return graphOfOps({a, b, c});
}

double coldInputBytes(const MultiRankPrediction& m, size_t op) {
  return m.ranks[0].prediction.per_op.at(op).cold_input_bytes;
}

TEST(JointPrediction, CoLocatedRanksShareTheLastLevelCacheByTheirTraffic) {
  const core::Graph streams = twoStreams();
  const ModelSet models = jointAnalyticModels(loadDeviceSpec(dataPath("models/host/device.yaml")));
  ASSERT_NEAR(*models.device.reuse_cache_bytes / double(1 << 20), 44.4, 0.1);
  std::vector<RankInput> twins(2);
  twins[0].graph = twins[1].graph = &streams;
  MultiRankOptions apart;
  apart.host_cores = -1;
  const MultiRankPrediction alone = predictRanks(twins, models, apart);
  const MultiRankPrediction shared = predictRanks(twins, models);
  ASSERT_EQ(alone.ranks[0].prediction.per_op.size(), 3u);
  // Alone every input survives; beside a twin streaming as much, half the
  // cache holds neither tensor from one touch to the next.
  for (size_t op = 0; op < 3; ++op) EXPECT_EQ(coldInputBytes(alone, op), 0.0) << op;
  EXPECT_DOUBLE_EQ(coldInputBytes(shared, 1), 12.0 * (1 << 20));  // Y: 24 MiB since
  EXPECT_GT(coldInputBytes(shared, 2), 0.0);                      // X: 12 MiB since
  EXPECT_LT(coldInputBytes(shared, 2), 12.0 * (1 << 20));
  EXPECT_GT(shared.ranks[0].compute_ms, alone.ranks[0].compute_ms);
  // Beside a rank that moves next to nothing, the cache is all but its own.
  const core::Graph quiet = reluAddAddRelu();
  std::vector<RankInput> lopsided(2);
  lopsided[0].graph = &streams;
  lopsided[1].graph = &quiet;
  const MultiRankPrediction mostly_own = predictRanks(lopsided, models);
  for (size_t op = 0; op < 3; ++op) EXPECT_EQ(coldInputBytes(mostly_own, op), 0.0) << op;
}

TEST(JointPrediction, OneTraceForIdenticalRanksCostsOneAndMatchesTheJointSimulation) {
  const core::Graph g = core::readTrace(dataPath("distributed/ddp_mlp.rank0.et.json.gz"));
  const ModelSet models = jointAnalyticModels(loadDeviceSpec(dataPath("models/host/device.yaml")));
  const MultiRankPrediction sym = predictSymmetric(g, 2, models, PredictOptions{});
  std::vector<RankInput> twice(2);
  twice[0].graph = twice[1].graph = &g;
  MultiRankOptions apart;  // one trace for N ranks does not share a host
  apart.host_cores = -1;
  const MultiRankPrediction joint = predictRanks(twice, models, apart);
  EXPECT_TRUE(sym.symmetric);
  ASSERT_EQ(sym.ranks.size(), 1u);
  EXPECT_NEAR(sym.iteration_ms, joint.iteration_ms, 1e-9);
  EXPECT_DOUBLE_EQ(joint.ranks[0].wait_ms, 0.0);
  EXPECT_EQ(joint.straggler, -1);
  // At 16,384 ranks every all-reduce runs 2(p-1) latency steps: longer.
  const MultiRankPrediction big = predictSymmetric(g, 16384, models, PredictOptions{});
  EXPECT_EQ(big.world_size, 16384);
  EXPECT_GT(big.ranks[0].comm_ms, sym.ranks[0].comm_ms);
  const nlohmann::json j = multiRankToJson(big);
  EXPECT_EQ(j["world_size"], 16384);
  EXPECT_EQ(j["ranks"].size(), 1u);
  EXPECT_EQ(j["ranks"][0]["stands_for_ranks"], 16384);
  for (const char* key : {"rank", "iteration_ms", "compute_ms", "comm_ms", "wait_ms",
                          "exposed_comm_ms"})
    EXPECT_TRUE(j["ranks"][0].contains(key)) << key;
}

TEST(JointPrediction, MeasuredJitterMakesEveryRankWaitAndGrowsWithTheRankCount) {
  const core::Graph g = core::readTrace(dataPath("distributed/ddp_mlp.rank0.et.json.gz"));
  ModelSet models = jointAnalyticModels(loadDeviceSpec(dataPath("models/host/device.yaml")));
  const MultiRankPrediction before = predictSymmetric(g, 2, models, PredictOptions{});
  auto comm = AlphaBetaModel::fromDevice(models.device);
  comm->sync_jitter.variance_per_us[2] = 500;  // ~2.2 ms after 10 ms of work
  models.setModel("comm", comm);
  const MultiRankPrediction two = predictSymmetric(g, 2, models, PredictOptions{});
  const MultiRankPrediction many = predictSymmetric(g, 1024, models, PredictOptions{});
  EXPECT_DOUBLE_EQ(before.ranks[0].wait_ms, 0.0);
  EXPECT_GT(two.ranks[0].wait_ms, 0.0);
  EXPECT_GT(two.iteration_ms, before.iteration_ms);
  // The expected latest of 1,024 arrivals is 3.24 sigmas late, of 2 0.56.
  EXPECT_GT(many.ranks[0].wait_ms, 5 * two.ranks[0].wait_ms);
  EXPECT_TRUE(std::any_of(two.notes.begin(), two.notes.end(), [](const std::string& n) {
    return n.find("arrival jitter") != std::string::npos;
  }));
  // Jointly: the two ranks of one trace wait as the stand-in for two does.
  std::vector<RankInput> twice(2);
  twice[0].graph = twice[1].graph = &g;
  MultiRankOptions apart;
  apart.host_cores = -1;
  const MultiRankPrediction joint = predictRanks(twice, models, apart);
  EXPECT_NEAR(joint.ranks[0].wait_ms, two.ranks[0].wait_ms, 1e-9);
  EXPECT_NEAR(joint.iteration_ms, two.iteration_ms, 1e-9);
  // The jitter is the measured host's: predicting for another device, no rank waits.
  PredictOptions elsewhere;
  elsewhere.target = loadDeviceSpec(sourcePath("configs/devices/h100.yaml"));
  EXPECT_DOUBLE_EQ(predictSymmetric(g, 2, models, elsewhere).ranks[0].wait_ms, 0.0);
}

TEST(JointPrediction, OnAnotherSystemTheCollectivesTakeItsTopology) {
  // The DLRM ranks without recorded kernels, on one DGX H100 node of 8 and on
  // two nodes of 4: the all-reduces cross InfiniBand on the second.
  std::deque<core::Graph> graphs;
  std::vector<RankInput> in;
  SystemSpec one = loadSystemSpec(sourcePath("configs/systems/dgx-h100.yaml"));
  SystemSpec two = one;
  two.devices_per_node = 4;
  two.nodes = 2;
  const ModelSet models = jointAnalyticModels(one.device);
  auto predict = [&](const SystemSpec& system) {
    in.clear();
    for (int r = 0; r < 8; ++r) {
      if (graphs.size() < 8) {
        graphs.push_back(core::readTrace(
            sharedTrace("dlrm_8rank/rank" + std::to_string(r) + ".et.json.gz")));
      }
      RankInput x;
      x.graph = &graphs[size_t(r)];
      x.opts.system = system;
      x.opts.target = system.device;
      in.push_back(std::move(x));
    }
    return predictRanks(in, models);
  };
  const MultiRankPrediction a = predict(one), b = predict(two);
  ASSERT_EQ(a.collectives.size(), b.collectives.size());
  for (size_t c = 0; c < a.collectives.size(); ++c) {
    EXPECT_EQ(a.collectives[c].transfer_from, "topology");
    // An all_to_all sends half its bytes over InfiniBand on two nodes; a
    // small all-reduce is faster hierarchically (22 against 28 us of
    // latency steps: 3 + 2 + 3 hops against 14).
    if (a.collectives[c].name == "all_to_all_single") {
      EXPECT_GT(b.collectives[c].transfer_us, a.collectives[c].transfer_us) << c;
    }
  }
  // 1.58 MB all-reduce on 8 NVLink ranks: 14 x 2 us + 2 x 7/8 x bytes / 450 GB/s.
  const CollectiveReport& ar = a.collectives[4];
  ASSERT_EQ(ar.name, "all_reduce");
  EXPECT_NEAR(ar.transfer_us, 1e6 * topologySeconds(one, "all_reduce", ar.members,
                                                    double(ar.bytes)), 1e-6);
}

}  // namespace
}  // namespace tracetwin::predictors
