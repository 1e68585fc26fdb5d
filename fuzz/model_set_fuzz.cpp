// libFuzzer entry point for a model set's manifest.json (`--models DIR` of
// predict, compare, sweep, host): any input must give a ModelSet or a
// tracetwin::Error, and a set that loads must predict the bundled mlp and
// embbag_sparse steps with times an op could take (finite, not negative), or
// refuse them with a tracetwin::Error. Hand-edited manifests that loaded and
// then printed a step of "inf" or nan with exit 0 are what this looks for.
//
// The input replaces the manifest of a copy of data/models/host, made once:
// its device.yaml, boosters and bfloat16 set stay, so mutations of the seed
// (the bundled manifest) reach the real models' loaders.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/graph.h"
#include "core/trace_reader.h"
#include "fuzz/prediction_fixture.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/predictor.h"

namespace {

namespace fs = std::filesystem;
using tracetwin::predictors::ModelSet;

// A private copy of the bundled host set whose manifest each input replaces.
const std::string& modelDir() {
  static const std::string dir = [] {
    const std::string dir = tracetwin::fuzz::scratchDirectory("tt-model-fuzz");
    fs::copy(TRACETWIN_FUZZ_MODELS, dir, fs::copy_options::recursive);
    return dir;
  }();
  return dir;
}

const std::vector<tracetwin::core::Graph>& steps() {
  static const std::vector<tracetwin::core::Graph> graphs = [] {
    std::vector<tracetwin::core::Graph> g;
    for (const char* trace : {TRACETWIN_FUZZ_MLP, TRACETWIN_FUZZ_EMBBAG})
      g.push_back(tracetwin::core::readTrace(trace));
    return g;
  }();
  return graphs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = modelDir();
  {
    std::ofstream manifest(fs::path(dir) / "manifest.json", std::ios::binary | std::ios::trunc);
    manifest.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  ModelSet models;
  try {
    models = ModelSet::load(dir);
  } catch (const tracetwin::Error&) {
    return 0;  // refusing bad input with a typed error is the expected outcome
  }
  for (const tracetwin::core::Graph& graph : steps()) {
    try {
      tracetwin::fuzz::requirePossible(tracetwin::predictors::predictGraph(graph, models, {}));
    } catch (const tracetwin::Error&) {
      // A set that loads may still be refused at prediction ("not a time an
      // op could take"): a clear error, not a wrong answer.
    }
  }
  return 0;
}
