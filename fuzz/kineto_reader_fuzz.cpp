// libFuzzer entry point for Kineto / PyTorch-profiler traces (`link`,
// `inspect --kineto`, `predict --kernel-times`, the overheads extractor): any
// input must give a KinetoTrace or a tracetwin::Error, and what parses goes
// on through everything that reads a Kineto trace: the index, the rank
// summary, the overhead extractor (whose table, written as `link` writes it,
// `predict --overheads` must read back unchanged) and the linker, against
// data/h100/mlp_big's ET (the ET of the bundled GPU Kineto seeds, so
// mutations of them still link).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "core/errors.h"
#include "core/graph.h"
#include "core/kineto/kineto_reader.h"
#include "core/kineto/linker.h"
#include "core/kineto/overheads.h"
#include "core/kineto/rank_summary.h"
#include "core/kineto/trace_index.h"
#include "core/trace_reader.h"
#include "predictors/host/overheads.h"

namespace {

namespace kineto = tracetwin::core::kineto;

const tracetwin::core::Graph& linkedEt() {
  static const tracetwin::core::Graph graph = tracetwin::core::readTrace(TRACETWIN_FUZZ_ET);
  return graph;
}

bool sameStats(const std::map<std::string, kineto::RobustStat>& written,
               const std::map<std::string, tracetwin::predictors::OverheadStat>& read) {
  if (written.size() != read.size()) return false;
  for (const auto& [key, w] : written) {
    auto r = read.find(key);
    // A mean of -1 (not recorded) is left out of the file and reads back as -1.
    if (r == read.end() || r->second.median_us != w.median || r->second.iqr_us != w.iqr ||
        r->second.count != w.count || r->second.mean_us != w.mean) {
      return false;
    }
  }
  return true;
}

// What `link --overheads-out` wrote against what `predict --overheads` read.
bool sameTable(const kineto::OverheadTable& written,
               const tracetwin::predictors::OverheadTable& read) {
  for (size_t i = 0; i < written.t.size(); ++i) {
    if (!sameStats(written.t[i], read.t[i])) return false;
  }
  return sameStats(written.regions, read.regions) && written.sources == read.sources &&
         written.charge_mean == read.charge_mean;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  kineto::KinetoTrace trace;
  try {
    trace = kineto::parseKinetoTrace(json, "fuzz.json");
  } catch (const tracetwin::Error&) {
    return 0;  // refusing bad input with a typed error is the expected outcome
  }
  try {
    (void)kineto::buildTraceIndex(trace);
    (void)kineto::summarizeRank(trace, nullptr);
    kineto::OverheadCollector collector;
    collector.addTrace(trace, kineto::defaultOperatorPredicate());
    const kineto::OverheadTable table = collector.finish();
    const std::string written = kineto::overheadsToJson(table);
    tracetwin::predictors::OverheadTable back;
    try {
      back = tracetwin::predictors::OverheadTable::fromJson(nlohmann::json::parse(written),
                                                            "fuzz-overheads.json");
    } catch (const tracetwin::Error& e) {
      std::fprintf(stderr, "the overheads reader refused what the writer wrote: %s\n%s\n", e.what(),
                   written.c_str());
      std::abort();
    }
    if (!sameTable(table, back)) {
      std::fprintf(stderr, "predict reads another table than link wrote:\n%s\n", written.c_str());
      std::abort();
    }
    const kineto::LinkedTimeline linked = kineto::linkTraces(linkedEt(), trace);
    (void)kineto::summarizeRank(trace, &linked);
  } catch (const tracetwin::Error&) {
    // A trace that parses may still be refused downstream (a link with no
    // operator in common), as long as it is refused with a typed error.
  }
  return 0;
}
