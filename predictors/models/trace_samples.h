// Kernel-model training samples from an original run instead of
// microbenchmarks: every top-level op whose kernels a linked Kineto trace
// recorded becomes a MeasuredOp timed by their summed durations. A team with
// traces from a GPU it cannot run microbenchmarks on (`tracetwin fit`) gets
// models of that GPU from them. Torch-free.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/graph.h"
#include "core/kineto/linker.h"
#include "predictors/models/measured_op.h"

namespace tracetwin::predictors {

struct TraceSamples {
  std::vector<MeasuredOp> samples;
  int64_t top_level_ops = 0;
  int64_t unmatched = 0;        // not linked to a Kineto event
  int64_t without_kernels = 0;  // linked, but launched nothing (views, CPU-side ops)
  // Collectives: their kernels wait for the other ranks, so their time is
  // not the op's own (the alpha-beta model is fitted elsewhere).
  int64_t collectives = 0;
  // Ops recorded under torch.autocast that cast their inputs: their kernels
  // are the casts' copies and the op's own, which a sample of one family
  // cannot tell apart (the predictor adds the casts by the copy model).
  // Those without casts (autocast's cached copies) are samples with the
  // features of their inner call: the dtype they computed in.
  int64_t autocast_with_casts = 0;
  // Per family: linked ops with kernels, and without.
  std::map<std::string, std::pair<int64_t, int64_t>> family_ops;
};

// Keeps the samples of the families whose linked ops mostly launched kernels.
// A family that mostly did not (views: a reshape that had to copy launches a
// kernel, the other views none) would learn only from its exceptions and
// predict every view as a copy (0.83 ms of "views" in mlp_big's H100 step
// against none recorded); such families keep the device's own fallback.
// Returns the families dropped.
std::vector<std::string> keepFamiliesThatLaunch(
    const std::map<std::string, std::pair<int64_t, int64_t>>& family_ops,
    std::vector<MeasuredOp>* samples);

// `timeline` links `graph` (core::kineto::linkTraces); `device` names the
// DeviceSpec the samples are recorded against.
TraceSamples samplesFromLinkedTrace(const core::Graph& graph,
                                    const core::kineto::LinkedTimeline& timeline,
                                    const std::string& device);

}  // namespace tracetwin::predictors
