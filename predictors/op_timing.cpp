#include "predictors/op_timing.h"

#include <unordered_set>

#include "predictors/node_args.h"

namespace tracetwin::predictors {
namespace {

constexpr int64_t kCommStream = 1;

bool onCuda(const std::string& device) { return device.rfind("cuda", 0) == 0; }

}  // namespace

int launchesOf(const std::string& family) { return family == "view" ? 0 : 1; }

bool isSynchronising(const core::Node& node) {
  static const std::unordered_set<std::string> kAlways = {"item", "_local_scalar_dense", "nonzero",
                                                          "is_nonzero", "masked_select", "unique"};
  std::string base = baseOpName(node.name);
  if (kAlways.count(base)) return true;
  // A device -> host copy: some CUDA input and a CPU output (or, for copy_,
  // a CPU destination `self` and a CUDA source).
  static const std::unordered_set<std::string> kCopies = {"to", "_to_copy", "copy_", "copy"};
  if (!kCopies.count(base)) return false;
  bool cuda_in = false, cpu_out = false;
  for (const core::TensorValue* t : inputTensors(node)) cuda_in |= onCuda(t->device);
  for (const core::TensorValue* t : outputTensors(node)) cpu_out |= t->device == "cpu";
  return cuda_in && cpu_out;
}

void applyDependencies(const core::Node& node, const std::string& family,
                       std::unordered_set<int64_t>* comm_storages, SimOp* s) {
  s->sync = !s->cpu_only && isSynchronising(node);
  if (family == "comm") {
    s->is_comm = true;
    for (const core::TensorValue* t : inputTensors(node)) comm_storages->insert(t->storage_id);
    for (const core::TensorValue* t : outputTensors(node)) comm_storages->insert(t->storage_id);
    return;
  }
  if (comm_storages->empty()) return;
  for (const core::TensorValue* t : inputTensors(node)) {
    if (comm_storages->count(t->storage_id)) {
      s->wait_stream = kCommStream;
      return;
    }
  }
}

}  // namespace tracetwin::predictors
