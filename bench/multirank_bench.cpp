// Multi-rank prediction speed: the synthetic 100,000-op step (synthetic_step.h)
// with a gradient all-reduce every 500 ops (200 collectives), predicted
//   - for one rank (predictGraph: the baseline),
//   - for N identical ranks from that one trace (predictSymmetric, N = 8,
//     1,024, 16,384): should cost about one rank's prediction,
//   - for 8 ranks simulated together (predictRanks over 8 graphs): about 8x.
// Google Benchmark times each case; then the cases run again in interleaved
// rounds (one of each per round, 5 rounds) and their medians are printed as
// ratios to one rank's, which is how this shared host should be read.
//
//   bench_multirank [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <fmt/core.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "bench/synthetic_step.h"
#include "predictors/comm/comm_model.h"
#include "predictors/simulation/joint_prediction.h"
#include "predictors/simulation/predictor.h"

namespace {

using namespace tracetwin;
using namespace tracetwin::bench;

constexpr int kCollectiveEvery = 500;
constexpr int kJointRanks = 8;

// An all_reduce of 1M floats after every kCollectiveEvery ops, as
// record_param_comms records one (no group size: the job's world).
void addAllReduce(int i, core::Graph* graph, core::NodeId* next) {
  if ((i + 1) % kCollectiveEvery != 0) return;
  core::Node n;
  n.id = (*next)++;
  n.parent = 2;
  n.tid = 1;
  n.name = "record_param_comms";
  n.inputs = {tensor({1 << 20})};
  n.outputs = {};
  core::CommAttributes& c = n.comm.emplace();
  c.collective_name = "all_reduce";
  c.dtype = "Float";
  c.in_msg_nelems = c.out_msg_nelems = 1 << 20;
  graph->addNode(std::move(n));
}

const core::Graph* g_graph = nullptr;
const predictors::ModelSet* g_models = nullptr;
// The same models with an arrival jitter in the comm model: every collective
// then takes the expected latest arrival (an integral over the members).
const predictors::ModelSet* g_jitter_models = nullptr;

predictors::ModelSet withJitter(predictors::ModelSet models) {
  auto comm = predictors::AlphaBetaModel::fromDevice(models.device);
  comm->sync_jitter.variance_per_us[2] = 500;  // this 2-vCPU host's Gloo, 2026-11-27
  models.setModel("comm", comm);
  return models;
}

double predictOne() {
  predictors::PredictOptions opts;
  opts.default_world_size = kJointRanks;
  return predictors::predictGraph(*g_graph, *g_models, opts).iteration_ms;
}

double predictSymmetric(int64_t ranks) {
  return predictors::predictSymmetric(*g_graph, ranks, *g_models, {}).iteration_ms;
}

double predictJoint(const predictors::ModelSet* models = g_models) {
  std::vector<predictors::RankInput> in(kJointRanks);
  for (auto& r : in) r.graph = g_graph;
  return predictors::predictRanks(in, *models).iteration_ms;
}

void BM_OneRank(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(predictOne());
  state.counters["ops"] = kOps;
}
BENCHMARK(BM_OneRank)->Unit(benchmark::kMillisecond);

void BM_SymmetricRanks(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(predictSymmetric(state.range(0)));
  state.counters["ranks"] = double(state.range(0));
}
BENCHMARK(BM_SymmetricRanks)->Arg(8)->Arg(1024)->Arg(16384)->Unit(benchmark::kMillisecond);

void BM_JointRanks(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(predictJoint());
  state.counters["ranks"] = kJointRanks;
}
BENCHMARK(BM_JointRanks)->Unit(benchmark::kMillisecond);

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One of each case per round, CPU seconds, medians over the rounds.
void interleavedRounds(int rounds) {
  struct Case {
    std::string name;
    std::function<double()> run;
    std::vector<double> ms;
  };
  std::vector<Case> cases = {
      {"one rank (predictGraph)", predictOne, {}},
      {"8 identical ranks (symmetric)", [] { return predictSymmetric(8); }, {}},
      {"1,024 identical ranks (symmetric)", [] { return predictSymmetric(1024); }, {}},
      {"16,384 identical ranks (symmetric)", [] { return predictSymmetric(16384); }, {}},
      {"8 ranks simulated together (joint)", [] { return predictJoint(); }, {}},
      {"8 ranks together, arrival jitter", [] { return predictJoint(g_jitter_models); }, {}},
      {"16,384 identical, arrival jitter",
       [] { return predictors::predictSymmetric(*g_graph, 16384, *g_jitter_models, {}).iteration_ms; },
       {}},
  };
  for (int r = 0; r < rounds; ++r) {
    for (Case& c : cases) {
      const double t0 = cpuSeconds();
      benchmark::DoNotOptimize(c.run());
      c.ms.push_back((cpuSeconds() - t0) * 1e3);
    }
  }
  const double base = median(cases[0].ms);
  fmt::print("\ninterleaved rounds ({} of each; CPU ms, median [min, max]; ratio to one rank):\n",
             rounds);
  for (const Case& c : cases) {
    const auto [lo, hi] = std::minmax_element(c.ms.begin(), c.ms.end());
    fmt::print("  {:<38} {:8.1f} [{:.1f}, {:.1f}]  {:.2f}x\n", c.name, median(c.ms), *lo, *hi,
               median(c.ms) / base);
  }
  fmt::print("per rank of the joint simulation: {:.2f}x one rank's prediction; 100k-op target "
             "<= 200 ms per rank: {}\n",
             median(cases[4].ms) / kJointRanks / base,
             median(cases[4].ms) / kJointRanks <= 200 ? "met" : "NOT met");
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const core::Graph graph = makeGraph(addAllReduce);
  const predictors::ModelSet models = makeModels();
  g_graph = &graph;
  g_models = &models;
  const predictors::ModelSet jittered = withJitter(models);
  g_jitter_models = &jittered;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  interleavedRounds(5);
  return 0;
}
