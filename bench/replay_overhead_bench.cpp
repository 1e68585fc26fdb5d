// bench_replay_overhead: what the replay loop adds per op. On data/adds5k
// (5,000 one-element in-place adds, where per-op overhead is everything) it
// times, in one run:
//   1. tracetwin's replay loop (replayGraph, median iteration / ops),
//   2. the same ops called back to back through the dispatcher with
//      prepared stacks (replay/direct_dispatch.h) - the baseline,
//   3. eager PyTorch from Python (x.add_(1) loop, /usr/bin/python3),
// and prints replay - direct per op against the 0.5 us target, from rounds
// of 1. and 2. back to back (BM_PairedRounds: the host's speed drifts).
#include <benchmark/benchmark.h>
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/bench_paths.h"
#include "core/statistics.h"
#include "core/trace_reader.h"
#include "replay/direct_dispatch.h"
#include "replay/replayer.h"
#include "replay/trace_meta.h"

namespace {

using namespace tracetwin;

constexpr double kTargetOverheadUs = 0.5;
constexpr int kWarmup = 3;
constexpr int kIters = 15;

std::string tracePath() { return bench::sourcePath("data/adds5k.et.json.gz"); }

const core::Graph& adds5k() {
  static const core::Graph graph = core::readTrace(tracePath());
  return graph;
}

using tracetwin::core::median;

struct Figures {
  double replay_us = 0;
  double direct_us = 0;
  double eager_us = 0;
  double paired_overhead_us = 0;  // median over rounds of (replay - direct)
  std::string eager_source;
} g_figures;

void BM_ReplayLoop(benchmark::State& state) {
  replay::ReplayOptions options;
  options.warmup_iters = kWarmup;
  options.measured_iters = kIters;
  options.threads = 1;
  double per_op = 0;
  for (auto _ : state) {
    const replay::ReplayResult r = replay::replayGraph(adds5k(), options);
    per_op = r.iteration_ms_median * 1e3 / double(std::max<int64_t>(r.replayed_ops, 1));
    state.SetIterationTime(r.iteration_ms_median / 1e3);
  }
  state.counters["per_op_us"] = per_op;
}

void BM_DirectDispatcher(benchmark::State& state) {
  double per_op = 0;
  for (auto _ : state) {
    const auto t = replay::timeDirectDispatch(adds5k(), kWarmup, kIters, 1);
    const double ms = median(t.iterations_ms);
    per_op = ms * 1e3 / double(std::max<int64_t>(t.ops, 1));
    state.SetIterationTime(ms / 1e3);
  }
  state.counters["per_op_us"] = per_op;
}

// The headline figure. This host switches between a fast and a ~1.6x slower
// mode every few seconds (another tenant on the core's sibling thread), and
// a switch between the two benchmarks above moves their difference by more
// than the target. So: rounds of replay then direct dispatch back to back
// (~0.1 s each), the difference taken within each round, the median over
// rounds reported.
void BM_PairedRounds(benchmark::State& state) {
  constexpr int kRounds = 9, kRoundIters = 5;
  std::vector<double> replay_us, direct_us, overhead_us;
  for (auto _ : state) {
    for (int r = 0; r < kRounds; ++r) {
      replay::ReplayOptions options;
      options.warmup_iters = 1;
      options.measured_iters = kRoundIters;
      options.threads = 1;
      const replay::ReplayResult rr = replay::replayGraph(adds5k(), options);
      const auto d = replay::timeDirectDispatch(adds5k(), 1, kRoundIters, 1);
      const double a = rr.iteration_ms_median * 1e3 / double(std::max<int64_t>(rr.replayed_ops, 1));
      const double b = median(d.iterations_ms) * 1e3 / double(std::max<int64_t>(d.ops, 1));
      replay_us.push_back(a);
      direct_us.push_back(b);
      overhead_us.push_back(a - b);
    }
    state.SetIterationTime(median(replay_us) * 5e-3);
  }
  g_figures.replay_us = median(replay_us);
  g_figures.direct_us = median(direct_us);
  g_figures.paired_overhead_us = median(overhead_us);
  state.counters["overhead_us"] = g_figures.paired_overhead_us;
}

// Eager PyTorch timed now, in this run, the way scripts/workloads/adds5k.py
// does: the whole 5,000-add loop / 5,000, median of 11 repeats.
double eagerPythonPerOpUs() {
  const char* script =
      "import time, torch\n"
      "torch.set_num_threads(1)\n"
      "x = torch.zeros(())\n"
      "for _ in range(2000): x.add_(1)\n"
      "s = []\n"
      "for _ in range(11):\n"
      "    t = time.perf_counter()\n"
      "    for _ in range(5000): x.add_(1)\n"
      "    s.append((time.perf_counter() - t) * 1e6 / 5000)\n"
      "print(sorted(s)[5])\n";
  const std::string cmd = std::string("/usr/bin/python3 -c '") + script + "' 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  double us = 0;
  if (pipe && std::fscanf(pipe.get(), "%lf", &us) == 1) return us;
  return 0;
}

void BM_EagerPython(benchmark::State& state) {
  double us = 0;
  for (auto _ : state) {
    us = eagerPythonPerOpUs();
    state.SetIterationTime(us * 5000 / 1e6);
  }
  g_figures.eager_source = "python3 in this run";
  if (us <= 0) {  // no python3 with torch here: the capture's figure, from another run
    std::ifstream in(replay::metaPathForTrace(tracePath()));
    auto meta = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (meta.is_object() && meta.contains("eager_per_op_us"))
      us = meta["eager_per_op_us"].get<double>();
    g_figures.eager_source = "data/adds5k.meta.json, captured earlier";
  }
  state.counters["per_op_us"] = us;
  g_figures.eager_us = us;
}

BENCHMARK(BM_ReplayLoop)->UseManualTime()->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DirectDispatcher)->UseManualTime()->Iterations(3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PairedRounds)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EagerPython)->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  const Figures& f = g_figures;
  if (f.replay_us > 0 && f.direct_us > 0) {
    const double overhead = f.paired_overhead_us;
    fmt::print(
        "\nadds5k per op (medians of 9 paired rounds): replay {:.3f} us, direct dispatcher "
        "{:.3f} us",
        f.replay_us, f.direct_us);
    if (f.eager_us > 0) fmt::print(", eager PyTorch {:.3f} us ({})", f.eager_us, f.eager_source);
    fmt::print(
        "\nreplay overhead over direct dispatch, median of the rounds' differences: "
        "{:.3f} us/op (target <= {:.1f}): {}\n",
        overhead, kTargetOverheadUs, overhead <= kTargetOverheadUs ? "OK" : "ABOVE TARGET");
    if (f.eager_us > 0) fmt::print("replay / eager = {:.2f}\n", f.replay_us / f.eager_us);
  }
  return 0;
}
