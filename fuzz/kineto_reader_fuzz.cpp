// libFuzzer entry point for Kineto / PyTorch-profiler traces (`link`,
// `inspect --kineto`, `predict --kernel-times`, the overheads extractor): any
// input must give a KinetoTrace or a tracetwin::Error, and what parses goes
// on through everything that reads a Kineto trace: the index, the rank
// summary, the overhead extractor (whose table must survive its JSON round
// trip) and the linker, against data/h100/mlp_big's ET (the ET of the
// bundled GPU Kineto seeds, so mutations of them still link).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

namespace {

namespace kineto = tracetwin::core::kineto;

const tracetwin::core::Graph& linkedEt() {
  static const tracetwin::core::Graph graph = tracetwin::core::readTrace(TRACETWIN_FUZZ_ET);
  return graph;
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
    const std::string written = kineto::overheadsToJson(collector.finish());
    std::string again;
    try {
      again = kineto::overheadsToJson(kineto::overheadsFromJson(written, "fuzz-overheads.json"));
    } catch (const tracetwin::Error& e) {
      std::fprintf(stderr, "the overheads reader refused what the writer wrote: %s\n%s\n", e.what(),
                   written.c_str());
      std::abort();
    }
    if (again != written) {
      std::fprintf(stderr, "overheads round trip changed the table:\n%s\n--- became ---\n%s\n",
                   written.c_str(), again.c_str());
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
