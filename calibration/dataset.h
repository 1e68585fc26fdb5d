// The measured dataset calibration writes beside the models (DIR/dataset.jsonl):
// one JSON object per line,
//   {"family", "case", "op", "measured_us", "device", "index_reuse", "repeated",
//    "host_slowdown" (when gauged), "idle_us", "previous_us", "repeats_us" (when
//    measured more than once), "host_us" and "kernels" (GPU), "reuse_bytes"
//    (the inputs' reuse distance in the unit), "spaced" (a spaced unit's row),
//    "node"}
// where "node" is the op as an execution-trace 1.0.1 node (name, op_schema,
// inputs/input_shapes/input_types, outputs/...). Keeping the op in the trace
// format means the dataset is read back through core's own trace parser, so
// `calibrate --refit DIR` fits new models without measuring again.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/graph.h"
#include "predictors/models/measured_op.h"

namespace tracetwin::calibration {

struct DatasetRow {
  std::string case_label;  // microbenchmark grid point it came from
  predictors::MeasuredOp sample;
  // How slow the host ran while this was measured, relative to the fastest
  // it ran (HostSpeedGauge; 0 = not gauged). A pooled row keeps the largest
  // of the measurements it kept.
  double host_slowdown = 0;
  // CPU: measured time since the previous call of the same op in its unit
  // graph (predictors/host/code_cold.h); 0 in datasets written before it.
  double idle_us = 0;
  double previous_us = 0;  // measured time of the op right before it
  // Every measurement pooled into sample.measured_us, in measuring order
  // (empty when measured once), so a refit can pool them another way.
  std::vector<double> repeats_us;
  // GPU: the op's call on the host (dispatcher, launches, median over the
  // iterations) and the kernels, memcpys and memsets it launched; what the
  // host-cost fit learns from (predictors/host/host_costs.h), and the
  // launch-count trees (predictors/kernels/launch_counts.h). 0 and -1 on a CPU, where
  // the op's time is its host time, and in datasets written before; rows
  // pooled from another host keep their kernels without their host time.
  double host_us = 0;
  int kernels = -1;
};

// The node as an ET 1.0.1 node object (ids kept).
nlohmann::json nodeToTraceJson(const core::Node& node);

// Writes every row; throws InputError naming the path when it cannot write.
void writeDataset(const std::string& path, const std::vector<DatasetRow>& rows);

// Reads what writeDataset wrote; InputError names the path and line at fault.
std::vector<DatasetRow> readDataset(const std::string& path);

// The grid point a row's label belongs to ("add_ numel=10 float32" for
// "add_ numel=10 float32 [cold] mm128"), or nullopt for a row of another kind.
using PointOf = std::function<std::optional<std::string>(const DatasetRow&)>;

// Rows measured two ways, matched by grid point and op name: each row that
// `measured` places at a point, with the row that `reference` places at the
// same point (the last such row); rows without one are left out.
std::vector<std::pair<const DatasetRow*, const DatasetRow*>> pairByPoint(
    const std::vector<DatasetRow>& rows, const PointOf& measured, const PointOf& reference);

}  // namespace tracetwin::calibration
