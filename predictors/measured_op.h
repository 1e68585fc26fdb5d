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
};

}  // namespace tracetwin::predictors
