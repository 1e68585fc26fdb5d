#include "predictors/simulation/prediction_notes.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "predictors/kernels/cross_device.h"

namespace tracetwin::predictors {

void addPredictionNotes(const PredictionFacts& f, Prediction* p) {
  if (!p->uncalibrated_ops.empty()) {
    int64_t ops = 0;
    std::vector<std::string> names;
    for (const UncalibratedOp& u : p->uncalibrated_ops) {
      ops += u.count;
      if (names.size() < 4) names.push_back(fmt::format("{} x{}", u.name, u.count));
    }
    p->notes.push_back(fmt::format(
        "{} ops whose names the models were not fitted on ({}{}) were predicted by their "
        "family's analytic model alone",
        ops, fmt::join(names, ", "), p->uncalibrated_ops.size() > names.size() ? ", ..." : ""));
  }
  // Which ops a precision set predicted, and how its host compared: it
  // predicts on its own probes, so a set measured while the host ran slower
  // predicts its ops slower (data/models/host/README.md: 1.6x, +36-49%).
  for (const auto& [dtype, set] : f.models.precision_sets) {
    const std::string label = fmt::format("@{}", core::dtypeName(dtype));
    int64_t ops = 0;
    for (const OpPrediction& o : p->per_op) ops += o.model.find(label) != std::string::npos;
    if (ops == 0) continue;
    const double main_peak = f.models.device.peakFlops(core::DType::kFloat32);
    p->notes.push_back(fmt::format(
        "{} ops ran in {} and were predicted by the {} precision set's models (calibrated at a "
        "float32 mm probe {:.2f}x the main set's)",
        ops, core::dtypeName(dtype), core::dtypeName(dtype),
        main_peak > 0 ? set->device.peakFlops(core::DType::kFloat32) / main_peak : 0.0));
  }
  if (f.opts.target) {
    p->notes.push_back(fmt::format("times calibrated on '{}' scaled to '{}' (Habitat-style)",
                                  f.models.device.name, f.opts.target->name));
    if (lacksComputeFacts(f.models.device)) {
      p->notes.push_back(fmt::format(
          "the models' device '{}' records no SM count (a GPU calibration before 2026-11-26): its "
          "compute was taken as '{}''s, and only memory bandwidth scaled",
          f.models.device.name, f.opts.target->name));
    }
    if (lacksCacheFacts(f.models.device, *f.opts.target)) {
      p->notes.push_back(fmt::format(
          "the models' device '{}' lists no L2 (GPU calibrations keep it in their sources): "
          "'{}''s {} MiB was taken as its own, and memory traffic within it scaled with clock and "
          "SMs, the rest with memory bandwidth",
          f.models.device.name, f.opts.target->name, f.opts.target->lastLevelCacheBytes() >> 20));
    }
    if (f.opts.target->kind != f.models.device.kind) {
      p->notes.push_back(
          "calibration and target devices are of different kinds (cpu vs gpu): scaling is a rough "
          "guess");
    }
  }
  if (f.opts.system) {
    p->notes.push_back(fmt::format(
        "collectives on system '{}': {} x {} devices, {} inside a node, {} between nodes, ranks "
        "placed {} (hierarchical alpha-beta on its links; the model set's comm model unused)",
        f.opts.system->name, f.opts.system->nodes, f.opts.system->devices_per_node,
        f.opts.system->intra_node_link, f.opts.system->inter_node_link, f.opts.system->placement));
    // A system file describes a kind of node: a bigger job goes on to more
    // of them (system_spec.h), which a user sizing a cluster must be told.
    if (const int64_t devices = f.opts.system->worldSize(); f.opts.default_world_size > devices) {
      p->notes.push_back(fmt::format(
          "the job's {} ranks exceed the {} devices of system '{}': ranks {} and up are placed "
          "on further nodes of its kind ({} nodes in all)",
          f.opts.default_world_size, devices, f.opts.system->name, devices,
          (f.opts.default_world_size + f.opts.system->devices_per_node - 1) /
              f.opts.system->devices_per_node));
    }
  }
  if (!f.opts.recorded_kernels.empty()) {
    p->notes.push_back(fmt::format(
        "kernel times recorded in a linked Kineto trace for {} of {} ops; the kernel models "
        "predicted the rest",
        f.recorded_kernels, f.ops));
  }
  if (f.unsized_comms > 0) {
    p->notes.push_back(
        fmt::format("{} collectives record no process-group size; world size {} assumed "
                    "(--world-size)",
                    f.unsized_comms, f.opts.default_world_size));
  }
  if (f.opts.host_scale != 1.0) {
    p->notes.push_back(fmt::format(
        "host costs (T1-T5, between-op terms) scaled by {} (--host-scale){}", f.opts.host_scale,
        f.cpu_device ? "; on a CPU device the ops' own times are not scaled" : ""));
  }
  if (f.defaults_used > 0) {
    p->notes.push_back(
        fmt::format("{} CPU-overhead values were built-in defaults (no overheads file or "
                    "no entry for the op)",
                    f.defaults_used));
  }
}

}  // namespace tracetwin::predictors
