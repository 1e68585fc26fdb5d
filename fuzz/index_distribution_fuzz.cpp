// libFuzzer entry point for index-distribution side files (`replay`,
// `compare`, `predict --index-distribution FILE`): any input must give a spec
// or a tracetwin::Error, and a spec that loads must carry on through what the
// predictor does with it on the bundled embbag_sparse step: its rules matched
// against the step's lookups, each matched lookup's index-reuse histogram
// (every share in [0, 1]), and the step predicted with the bundled host
// models and those histograms to times an op could take. A Zipf exponent
// that underflowed every weight (0/0) once predicted the steepest law slower
// than uniform indices; a refusal with a typed error is fine, a wrong number
// is not.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/graph.h"
#include "core/trace_reader.h"
#include "fuzz/prediction_fixture.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/predictor.h"
#include "predictors/specs/index_distribution_spec.h"

namespace {

namespace predictors = tracetwin::predictors;

const tracetwin::core::Graph& lookupStep() {
  static const tracetwin::core::Graph graph = tracetwin::core::readTrace(TRACETWIN_FUZZ_EMBBAG);
  return graph;
}

const predictors::ModelSet& hostModels() {
  static const predictors::ModelSet& models =
      tracetwin::fuzz::modelsNeverFreed(TRACETWIN_FUZZ_MODELS);
  return models;
}

// A share of lookups or rows: what the embedding features take as given.
void requireShares(tracetwin::core::NodeId op, const std::vector<double>& histogram) {
  for (double share : histogram) {
    if (!(share >= 0 && share <= 1 + 1e-9)) {
      std::fprintf(stderr, "op %lld: an index-reuse share of %g\n", static_cast<long long>(op),
                   share);
      std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  predictors::PredictOptions options;
  try {
    const predictors::IndexDistributionSpec spec =
        predictors::parseIndexDistributions(text, "fuzz.yaml");
    const predictors::ResolvedIndexDistributions resolved =
        predictors::resolveIndexDistributions(spec, lookupStep());
    options.index_reuse = predictors::indexReuseOf(resolved);
  } catch (const tracetwin::Error&) {
    return 0;  // refusing bad input with a typed error is the expected outcome
  }
  for (const auto& [op, histogram] : options.index_reuse) requireShares(op, histogram);
  try {
    tracetwin::fuzz::requirePossible(predictors::predictGraph(lookupStep(), hostModels(), options));
  } catch (const tracetwin::Error&) {
    // Refused at prediction with a clear error: not a wrong answer.
  }
  return 0;
}
