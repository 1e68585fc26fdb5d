// `replay` on a torch.compile step: the kernel times its stand-ins take
// (recorded in the original's Kineto trace, mode 2; predicted by a model
// set, mode 3), the kernels the original ran in compiled regions that the
// trace never recorded, and the report of how the compiled kernels were
// replayed (docs/replay.md, "Compiled steps").
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "core/graph.h"
#include "core/kineto/linker.h"
#include "replay/replayer.h"

namespace tracetwin::cli {

// Each selected Triton op's recorded device time (the sum of its kernels in
// the linked Kineto trace) into options->recorded_device_us.
void addRecordedKernelTimes(const core::Graph& graph, const core::kineto::LinkedTimeline& original,
                            replay::ReplayOptions* options);

// Each selected Triton op's device time as the models in `models_dir`
// predict it into options->predicted_device_us. Throws like ModelSet::load.
void addPredictedKernelTimes(const core::Graph& graph, const std::string& models_dir,
                             replay::ReplayOptions* options);

// Kernels the original ran under compiled-region labels with no Triton
// node of the trace around them: Inductor's launches that the execution
// trace did not record (core/compiled_regions.h says when that happens).
struct UnrecordedKernels {
  int64_t kernels = 0;
  double device_us = 0;  // their time in the linked iteration
};
UnrecordedKernels unrecordedCompiledKernels(const core::Graph& graph,
                                            const core::kineto::LinkedTimeline& original);

// The terminal lines of the compiled-kernel report; nothing when the trace
// has neither compiled regions nor Triton kernels. `unrecorded` may be null
// (no Kineto trace).
void printCompiledReplay(const replay::ReplayResult& result, const UnrecordedKernels* unrecorded,
                         std::FILE* out);

// result's "compiled" JSON with the unrecorded kernels and the coverage
// they imply added ("unrecorded_kernels", "coverage_counting_unrecorded").
nlohmann::json compiledReplayReport(const replay::ReplayResult& result,
                                    const UnrecordedKernels* unrecorded);

}  // namespace tracetwin::cli
