// Trace reader throughput: uncompressed ET JSON -> finished Graph (parse,
// finalize, tensor table), in MB/s of JSON, against Python's json.load of the
// same file measured in the same run (the baseline: what et_replay does).
//
//   bench_trace_reader [--benchmark_filter=...]
//   TRACETWIN_BENCH_TRACE=/path/to/trace.json(.gz) overrides the trace.
#include <benchmark/benchmark.h>
#include <fmt/core.h>
#include <unistd.h>  // getpid

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>

#include "bench/bench_paths.h"
#include "core/trace_reader.h"

namespace {

// CPU time of this process, not wall time: the build machine is shared, and
// the target is "MB/s on one core". Python's side uses time.process_time().
double cpuSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::string tracePath() {
  if (const char* env = std::getenv("TRACETWIN_BENCH_TRACE")) return env;
  return tracetwin::bench::sharedTrace("resnet_1.1.0_et.json.gz");
}

// Decompressed once, outside every timed loop.
const std::string& traceJson() {
  static const std::string json = tracetwin::core::readMaybeGzipFile(tracePath());
  return json;
}

// The uncompressed trace as a file, for json.load.
const std::string& traceJsonFile() {
  static const std::string path = [] {
    std::string p = fmt::format("/tmp/tracetwin_bench_{}.json", static_cast<long>(::getpid()));
    std::ofstream(p, std::ios::binary) << traceJson();
    return p;
  }();
  return path;
}

struct Rate {
  double bytes = 0;
  double seconds = 0;
  double mbPerS() const { return seconds > 0 ? bytes / seconds / 1e6 : 0; }
};
Rate g_reader, g_in_memory, g_gzip, g_python;

// What readTrace does with an uncompressed file: read it (from the page
// cache) while parsing it a chunk at a time, to a finished Graph. The target
// figure.
void BM_ReadTraceToGraph(benchmark::State& state) {
  const std::string& file = traceJsonFile();
  for (auto _ : state) {
    const double t0 = cpuSeconds();
    tracetwin::core::Graph g = tracetwin::core::readTrace(file);
    benchmark::DoNotOptimize(g.nodes().data());
    // Until the Graph is ready; freeing it is the caller's business.
    g_reader.seconds += cpuSeconds() - t0;
    g_reader.bytes += static_cast<double>(traceJson().size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * traceJson().size()));
  state.counters["MB/s"] = g_reader.mbPerS();
}
BENCHMARK(BM_ReadTraceToGraph)->Unit(benchmark::kMillisecond)->MinTime(3);

// The same text already in memory, parsed in one piece (parseTrace: tests,
// fuzzing): the parser alone, without file reading or chunking.
void BM_ParseTextInMemory(benchmark::State& state) {
  const std::string& json = traceJson();
  for (auto _ : state) {
    const double t0 = cpuSeconds();
    tracetwin::core::Graph g = tracetwin::core::parseTrace(json, tracePath());
    benchmark::DoNotOptimize(g.nodes().data());
    g_in_memory.seconds += cpuSeconds() - t0;
    g_in_memory.bytes += static_cast<double>(json.size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * json.size()));
  state.counters["MB/s"] = g_in_memory.mbPerS();
}
BENCHMARK(BM_ParseTextInMemory)->Unit(benchmark::kMillisecond)->MinTime(3);

// The gzip file as shipped: decompressed (zlib) while parsed.
void BM_ReadGzipTraceToGraph(benchmark::State& state) {
  const std::string file = tracePath();
  for (auto _ : state) {
    const double t0 = cpuSeconds();
    tracetwin::core::Graph g = tracetwin::core::readTrace(file);
    benchmark::DoNotOptimize(g.nodes().data());
    g_gzip.seconds += cpuSeconds() - t0;
    g_gzip.bytes += static_cast<double>(traceJson().size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * traceJson().size()));
  state.counters["MB/s"] = g_gzip.mbPerS();
}
BENCHMARK(BM_ReadGzipTraceToGraph)->Unit(benchmark::kMillisecond)->MinTime(3);

// Python's json.loads of the same bytes, CPU time measured inside Python
// (interpreter start-up and file reading excluded). /usr/bin/python3 is Debian's, the one with
// torch.
void BM_PythonJsonLoad(benchmark::State& state) {
  const std::string& file = traceJsonFile();
  const std::string cmd = fmt::format(
      "/usr/bin/python3 -c 'import json,sys,time\nf=open(sys.argv[1],\"rb\");b=f.read()\n"
      "t=time.process_time();json.loads(b);print(time.process_time()-t)' {}",
      file);
  for (auto _ : state) {
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(cmd.c_str(), "r"), ::pclose);
    double seconds = -1;
    if (!pipe || std::fscanf(pipe.get(), "%lf", &seconds) != 1 || seconds <= 0) {
      state.SkipWithError("could not run /usr/bin/python3 for the json.load baseline");
      return;
    }
    state.SetIterationTime(seconds);
    g_python.seconds += seconds;
    g_python.bytes += static_cast<double>(traceJson().size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * traceJson().size()));
  state.counters["MB/s"] = g_python.mbPerS();
}
BENCHMARK(BM_PythonJsonLoad)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(5);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  fmt::print("trace: {} ({:.1f} MB uncompressed)\n", tracePath(), traceJson().size() / 1e6);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (g_in_memory.seconds > 0) {
    fmt::print("in-memory text {:.0f} MB/s; gzip file {:.0f} MB/s of uncompressed JSON\n",
               g_in_memory.mbPerS(), g_gzip.mbPerS());
  }
  if (g_reader.seconds > 0 && g_python.seconds > 0) {
    fmt::print(
        "trace reader (file -> Graph) {:.0f} MB/s, Python json.load {:.0f} MB/s: {:.2f}x "
        "json.load "
        "(target: >= 300 MB/s)\n",
        g_reader.mbPerS(), g_python.mbPerS(), g_reader.mbPerS() / g_python.mbPerS());
  }
  std::remove(traceJsonFile().c_str());
  return 0;
}
