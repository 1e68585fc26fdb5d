// Kineto reader throughput on the shared linear trace (about 1.2 MB gzip,
// ~40 iterations). Reported as bytes/s of decompressed JSON; the baseline in
// the same run is simdjson's bare parse of the same bytes (no event
// extraction), so the ratio says what the typed extraction costs.
#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <string>

#include "bench/bench_paths.h"
#include "core/kineto/kineto_reader.h"
#include "core/trace_reader.h"

namespace {

const std::string& linearJson() {
  static const std::string bytes =
      tracetwin::core::readMaybeGzipFile(tracetwin::bench::sharedTrace("linear_kineto.json.gz"));
  return bytes;
}

void BM_SimdjsonParseOnly(benchmark::State& state) {
  const std::string& json = linearJson();
  simdjson::dom::parser parser;
  for (auto _ : state) {
    simdjson::dom::element root;
    auto code = parser.parse(json.data(), json.size(), true).get(root);
    benchmark::DoNotOptimize(code);
    benchmark::DoNotOptimize(root);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * json.size()));
}
BENCHMARK(BM_SimdjsonParseOnly)->Unit(benchmark::kMillisecond);

void BM_ParseKinetoTrace(benchmark::State& state) {
  const std::string& json = linearJson();
  for (auto _ : state) {
    auto trace = tracetwin::core::kineto::parseKinetoTrace(json, "linear_kineto.json");
    benchmark::DoNotOptimize(trace.events.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * json.size()));
}
BENCHMARK(BM_ParseKinetoTrace)->Unit(benchmark::kMillisecond);

// Including gzip decompression (what `tracetwin link` pays per file).
void BM_ReadKinetoTraceGz(benchmark::State& state) {
  const std::string path = tracetwin::bench::sharedTrace("linear_kineto.json.gz");
  for (auto _ : state) {
    auto trace = tracetwin::core::kineto::readKinetoTrace(path);
    benchmark::DoNotOptimize(trace.events.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * linearJson().size()));
}
BENCHMARK(BM_ReadKinetoTraceGz)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
