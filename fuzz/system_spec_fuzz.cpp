// libFuzzer entry point for cluster files (configs/systems/*.yaml, `predict
// --system FILE`): any input must give a SystemSpec or a tracetwin::Error,
// and a system that loads must carry on through a what-if prediction on it:
// rank 0 of the bundled ddp_mlp capture standing for a data-parallel job
// over every device of the cluster (its all-reduces over the topology's
// links, hierarchical across nodes), predicted with the bundled H200 models
// scaled to the system's device, to times an op could take.
//
// The input is written as systems/fuzz.yaml beside a copy of
// configs/devices, made once, so that the shipped files' relative `device:
// ../devices/h100.yaml` resolves.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/errors.h"
#include "core/graph.h"
#include "core/trace_reader.h"
#include "fuzz/prediction_fixture.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/predictor.h"
#include "predictors/specs/system_spec.h"

namespace {

namespace fs = std::filesystem;
namespace predictors = tracetwin::predictors;

// DIR/systems/fuzz.yaml, with DIR/devices a copy of configs/devices.
const std::string& systemPath() {
  static const std::string path = [] {
    const std::string dir = tracetwin::fuzz::scratchDirectory("tt-system-fuzz");
    fs::copy(TRACETWIN_FUZZ_DEVICES, fs::path(dir) / "devices", fs::copy_options::recursive);
    fs::create_directory(fs::path(dir) / "systems");
    return (fs::path(dir) / "systems" / "fuzz.yaml").string();
  }();
  return path;
}

const tracetwin::core::Graph& dataParallelRank() {
  static const tracetwin::core::Graph graph = tracetwin::core::readTrace(TRACETWIN_FUZZ_DDP);
  return graph;
}

const predictors::ModelSet& gpuModels() {
  static const predictors::ModelSet& models =
      tracetwin::fuzz::modelsNeverFreed(TRACETWIN_FUZZ_GPU_MODELS);
  return models;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  {
    std::ofstream file(systemPath(), std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  predictors::PredictOptions options;
  try {
    options.system = predictors::loadSystemSpec(systemPath());
  } catch (const tracetwin::Error&) {
    return 0;  // refusing bad input with a typed error is the expected outcome
  }
  options.target = options.system->device;  // what `predict --system` does
  options.default_world_size = options.system->worldSize();
  options.force_world_size = true;
  try {
    tracetwin::fuzz::requirePossible(
        predictors::predictGraph(dataParallelRank(), gpuModels(), options));
  } catch (const tracetwin::Error&) {
    // Refused at prediction with a clear error: not a wrong answer.
  }
  return 0;
}
