#include "cli/compiled_standins.h"

#include <fmt/core.h>

#include "core/compiled_regions.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/predictor.h"
#include "replay/result_json.h"

namespace tracetwin::cli {
namespace {

bool isCompiledKernel(const core::Graph& graph, core::NodeId id) {
  const core::Node* n = graph.findNode(id);
  return n != nullptr && n->category == core::NodeCategory::kTriton;
}

bool inCompiledRegion(const core::Graph& graph, core::NodeId id) {
  for (const core::Node* n = graph.findNode(id); n != nullptr && n->id != graph.rootId();
       n = graph.findNode(n->parent)) {
    if (core::isCompiledRegionLabel(n->name)) return true;
  }
  return false;
}

}  // namespace

void addRecordedKernelTimes(const core::Graph& graph, const core::kineto::LinkedTimeline& original,
                            replay::ReplayOptions* options) {
  for (const auto& op : original.ops) {
    if (op.matched && op.device_us > 0 && isCompiledKernel(graph, op.id))
      options->recorded_device_us[op.id] = op.device_us;
  }
}

void addPredictedKernelTimes(const core::Graph& graph, const std::string& models_dir,
                             replay::ReplayOptions* options) {
  const predictors::ModelSet models = predictors::ModelSet::load(models_dir);
  const predictors::Prediction p = predictors::predictGraph(graph, models, {});
  for (const auto& op : p.per_op) {
    if (op.predicted_us > 0 && isCompiledKernel(graph, op.id))
      options->predicted_device_us[op.id] = op.predicted_us;
  }
}

UnrecordedKernels unrecordedCompiledKernels(const core::Graph& graph,
                                            const core::kineto::LinkedTimeline& original) {
  UnrecordedKernels u;
  for (const auto& label : original.labels) {
    if (!inCompiledRegion(graph, label.id)) continue;
    u.kernels += static_cast<int64_t>(label.kernels.size());
    u.device_us += label.device_us;
  }
  return u;
}

void printCompiledReplay(const replay::ReplayResult& r, const UnrecordedKernels* unrecorded,
                         std::FILE* out) {
  const replay::CompiledReplay& c = r.compiled;
  if (c.kernels == 0 && c.regions == 0) {
    // The option changed nothing: say so rather than let it pass as used.
    if (!c.inductor_cache.empty()) {
      fmt::print(out,
                 "note: --inductor-cache {}: the trace has no Triton kernels (not a "
                 "torch.compile step); nothing was launched from it\n",
                 c.inductor_cache);
    }
    return;
  }
  fmt::print(out, "compiled: {} Triton kernels ({} forward, {} backward) in {} compiled regions\n",
             c.kernels, c.forward_kernels, c.backward_kernels, c.regions);
  if (c.kernels > 0) {
    fmt::print(out, "  launched from Inductor's cache (mode 1, replayed): {}{}\n", c.launched,
               c.inductor_cache.empty() ? " (no --inductor-cache)" : "");
    fmt::print(out, "  stood in for, recorded kernel time (mode 2): {} ({:.1f} us per iteration)\n",
               c.recorded_standins, c.recorded_standin_us);
    fmt::print(out,
               "  stood in for, predicted kernel time (mode 3, predicted, not measured): {} "
               "({:.1f} us per iteration)\n",
               c.predicted_standins, c.predicted_standin_us);
    fmt::print(out, "  not stood in (no cache entry, recorded or predicted time): {}\n",
               c.not_stood_in);
    if (!c.waits_on.empty()) fmt::print(out, "  launches and device waits on: {}\n", c.waits_on);
    fmt::print(out, "  stand-ins count as not replayed: coverage {:.2f}% is of ops that ran\n",
               100.0 * r.coverage);
  }
  for (const std::string& w : c.warnings) fmt::print(out, "  warning: {}\n", w);
  if (unrecorded != nullptr && unrecorded->kernels > 0) {
    const double denominator = double(r.selected_ops + unrecorded->kernels);
    fmt::print(out,
               "  warning: the original ran {} kernels ({:.3f} ms) in compiled regions that the "
               "trace did not record; counting them, coverage is {:.2f}%\n",
               unrecorded->kernels, unrecorded->device_us / 1000.0,
               100.0 * double(r.replayed_ops) / denominator);
  }
}

nlohmann::json compiledReplayReport(const replay::ReplayResult& r,
                                    const UnrecordedKernels* unrecorded) {
  nlohmann::json j = replay::compiledReplayJson(r.compiled);
  if (unrecorded != nullptr) {
    j["unrecorded_kernels"] = unrecorded->kernels;
    j["unrecorded_kernel_us"] = unrecorded->device_us;
    const double denominator = double(r.selected_ops + unrecorded->kernels);
    j["coverage_counting_unrecorded"] =
        denominator > 0 ? double(r.replayed_ops) / denominator : 0.0;
  }
  return j;
}

}  // namespace tracetwin::cli
