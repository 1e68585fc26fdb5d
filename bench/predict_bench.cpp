// Prediction speed: predictGraph on a synthetic 100,000-op graph (ResNet /
// DLRM-like op mix, XGBoost models for GEMM, conv and embedding) against the
// baseline of merely walking the same graph (selection + touching every
// tensor of every op), measured in the same run. Target: <= 200 ms.
//
//   bench_predict [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <fmt/core.h>

#include <string>
#include <vector>

#include "bench/synthetic_step.h"
#include "core/graph.h"
#include "predictors/host/reuse_distance.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/predictor.h"

namespace {

using namespace tracetwin;

using namespace tracetwin::bench;

const core::Graph* g_graph = nullptr;
const predictors::ModelSet* g_models = nullptr;
const predictors::ModelSet* g_cpu_models = nullptr;
const predictors::ModelSet* g_models_without_launch_counts = nullptr;

double g_walk_ms = 0, g_predict_ms = 0, g_predict_cpu_ms = 0, g_predict_no_launch_ms = 0;

// Models of the same mix as a CPU host's, with a code-cold term (the figures
// of a 120 s calibration of the development host) and spaced samples: the
// CPU path adds the between-op costs, the code-cold pass over every op and
// the walk for the inputs' reuse distances.
predictors::ModelSet asCpuHostModels(predictors::ModelSet models) {
  models.device.kind = predictors::DeviceKind::kCpu;
  models.device.name = "bench-cpu";
  models.code_cold.tau_us = 17300;
  models.code_cold.shared_us = 38.6;
  models.code_cold.all_us = 39.1;
  models.code_cold.per_family_us = {{"elementwise", 28.1}, {"view", 33.0}};
  models.code_cold.pairs = 766;
  return models;
}

void BM_WalkGraph(benchmark::State& state) {
  const core::Graph& g = *g_graph;
  double t0 = cpuSeconds();
  for (auto _ : state) {
    core::Selection sel = core::selectTopLevelOps(g);
    double bytes = 0;
    for (core::NodeId id : sel.ops) {
      for (const core::Value& v : g.node(id).inputs)
        core::forEachTensor(v, [&](const core::TensorValue& t) { bytes += t.bytes(); });
    }
    benchmark::DoNotOptimize(bytes);
  }
  g_walk_ms = (cpuSeconds() - t0) * 1e3 / static_cast<double>(state.iterations());
  state.counters["ops"] = kOps;
}
BENCHMARK(BM_WalkGraph)->Unit(benchmark::kMillisecond);

// The inputs' reuse distances of every op (reuse_distance.h), which CPU
// predictions with spaced models walk once.
void BM_ReuseDistances(benchmark::State& state) {
  const core::Graph& g = *g_graph;
  std::vector<const core::Node*> ops;
  for (core::NodeId id : core::selectTopLevelOps(g).ops) ops.push_back(&g.node(id));
  for (auto _ : state) benchmark::DoNotOptimize(predictors::inputReuseBytes(ops, state.range(0)));
  state.counters["ops"] = kOps;
}
BENCHMARK(BM_ReuseDistances)->Arg(0)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

void BM_PredictGraph(benchmark::State& state) {
  const core::Graph& g = *g_graph;
  const predictors::ModelSet& models = *g_models;
  double t0 = cpuSeconds();
  double iteration_ms = 0;
  for (auto _ : state) {
    predictors::Prediction p = predictors::predictGraph(g, models, predictors::PredictOptions{});
    iteration_ms = p.iteration_ms;
    benchmark::DoNotOptimize(p);
  }
  g_predict_ms = (cpuSeconds() - t0) * 1e3 / static_cast<double>(state.iterations());
  state.counters["ops"] = kOps;
  state.counters["predicted_iteration_ms"] = iteration_ms;
}
BENCHMARK(BM_PredictGraph)->Unit(benchmark::kMillisecond);

// The same GPU models without the launch counts: the baseline the counts'
// cost is read against.
void BM_PredictGraphWithoutLaunchCounts(benchmark::State& state) {
  const core::Graph& g = *g_graph;
  double t0 = cpuSeconds();
  for (auto _ : state) {
    predictors::Prediction p = predictors::predictGraph(g, *g_models_without_launch_counts, {});
    benchmark::DoNotOptimize(p);
  }
  g_predict_no_launch_ms = (cpuSeconds() - t0) * 1e3 / static_cast<double>(state.iterations());
  state.counters["ops"] = kOps;
}
BENCHMARK(BM_PredictGraphWithoutLaunchCounts)->Unit(benchmark::kMillisecond);

void BM_PredictGraphCpuHost(benchmark::State& state) {
  const core::Graph& g = *g_graph;
  double t0 = cpuSeconds();
  for (auto _ : state) {
    predictors::Prediction p = predictors::predictGraph(g, *g_cpu_models, {});
    benchmark::DoNotOptimize(p);
  }
  g_predict_cpu_ms = (cpuSeconds() - t0) * 1e3 / static_cast<double>(state.iterations());
  state.counters["ops"] = kOps;
}
BENCHMARK(BM_PredictGraphCpuHost)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // Built outside the timed regions.
  const core::Graph graph = makeGraph();
  const predictors::ModelSet models = makeModels();
  const predictors::ModelSet cpu_models = asCpuHostModels(makeModels(/*spaced=*/true));
  predictors::ModelSet without_launch_counts = models;
  without_launch_counts.launch_counts = {};
  g_graph = &graph;
  g_models = &models;
  g_models_without_launch_counts = &without_launch_counts;
  g_cpu_models = &cpu_models;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (g_walk_ms > 0 && g_predict_ms > 0) {
    fmt::print(
        "predict {:.1f} ms CPU for {} ops ({:.2f} us/op); walk-only baseline {:.1f} ms; ratio "
        "{:.1f}x; "
        "target <= 200 ms: {}\n",
        g_predict_ms, kOps, g_predict_ms * 1e3 / kOps, g_walk_ms, g_predict_ms / g_walk_ms,
        g_predict_ms <= 200 ? "met" : "NOT met");
  }
  if (g_predict_ms > 0 && g_predict_no_launch_ms > 0) {
    fmt::print("launch counts: {:.1f} ms with, {:.1f} ms without ({:.3f}x)\n", g_predict_ms,
               g_predict_no_launch_ms, g_predict_ms / g_predict_no_launch_ms);
  }
  if (g_walk_ms > 0 && g_predict_cpu_ms > 0) {
    fmt::print(
        "predict as a CPU host with the code-cold term {:.1f} ms CPU ({:.1f}x the walk); target "
        "<= 200 ms: {}\n",
        g_predict_cpu_ms, g_predict_cpu_ms / g_walk_ms,
        g_predict_cpu_ms <= 200 ? "met" : "NOT met");
  }
  return 0;
}
