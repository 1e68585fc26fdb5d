// One measurement of one op: what calibration hands to fitting.
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"

namespace tracetwin::predictors {

struct MeasuredOp {
  core::Node node;         // the op as a trace node (name, schema, inputs, outputs)
  double measured_us = 0;  // device time (GPU: CUPTI kernels; CPU: steady clock)
  std::string device;      // DeviceSpec::name it was measured on
  // Optional, embedding ops only: fraction of unique indices whose access
  // count falls in (0,1], (1,2], (2,4], ... (kReuseBins bins, see features.h).
  // Empty: features assume uniformly random indices.
  std::vector<double> index_reuse;
  // Measured among copies of itself (a repeated microbenchmark: its code hot
  // in the caches) rather than interleaved with other ops; see
  // OpFeatures::repeated.
  bool repeated = false;
  // The inputs' reuse distance in the unit the op was measured in
  // (OpFeatures::reuse_bytes); negative when not recorded (the op alone is
  // assumed: only its own tensors between two calls).
  double reuse_bytes = -1.0;
  // Measured after a stream of other traffic, at a reuse distance a
  // microbenchmark re-running one op never has (calibration's spaced units):
  // only the trees learn from it, not the analytic base of cache-hot times.
  bool spaced = false;
};

}  // namespace tracetwin::predictors
