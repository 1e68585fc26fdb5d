#include "predictors/simulation/op_timing.h"

#include <string_view>
#include <unordered_set>

namespace tracetwin::predictors {
namespace {

bool onCuda(const std::string& device) { return device.rfind("cuda", 0) == 0; }

// "aten::copy_.default" -> "copy_", without allocating (runs once per op).
std::string_view baseName(std::string_view name) {
  size_t ns = name.rfind("::");
  if (ns != std::string_view::npos) name.remove_prefix(ns + 2);
  return name.substr(0, name.find('.'));
}

template <typename Fn>
void eachTensor(const std::vector<core::Value>& values, Fn&& fn) {
  for (const core::Value& v : values) {
    core::forEachTensor(v, [&](const core::TensorValue& t) {
      if (t.defined()) fn(t);
    });
  }
}

}  // namespace

int launchesOf(const std::string& family) { return family == "view" ? 0 : 1; }

bool isSynchronising(const core::Node& node) {
  static const std::unordered_set<std::string_view> kAlways = {
      "item", "_local_scalar_dense", "nonzero", "is_nonzero", "masked_select", "unique"};
  static const std::unordered_set<std::string_view> kCopies = {"to", "_to_copy", "copy_", "copy"};
  std::string_view base = baseName(node.name);
  if (kAlways.count(base)) return true;
  if (!kCopies.count(base)) return false;
  // A device -> host copy: some CUDA input and a CPU output (for copy_, the
  // CPU destination `self` is both an input and the output).
  bool cuda_in = false, cpu_out = false;
  eachTensor(node.inputs, [&](const core::TensorValue& t) { cuda_in |= onCuda(t.device); });
  eachTensor(node.outputs, [&](const core::TensorValue& t) { cpu_out |= t.device == "cpu"; });
  return cuda_in && cpu_out;
}

void applyDependencies(const core::Node& node, const std::string& family,
                       std::unordered_set<int64_t>* comm_storages, SimOp* s) {
  s->sync = !s->cpu_only && isSynchronising(node);
  if (family == "comm") {
    s->is_comm = true;
    auto record = [&](const core::TensorValue& t) { comm_storages->insert(t.storage_id); };
    eachTensor(node.inputs, record);
    eachTensor(node.outputs, record);
    return;
  }
  if (comm_storages->empty()) return;
  bool touches_comm = false;
  auto check = [&](const core::TensorValue& t) {
    touches_comm |= comm_storages->count(t.storage_id) > 0;
  };
  eachTensor(node.inputs, check);
  // On a CPU the op runs on the thread that issued the (Gloo) collective,
  // and writing its buffers waits too, as the distributed replay does.
  if (s->cpu_only) eachTensor(node.outputs, check);
  if (touches_comm) s->wait_stream = kCommStream;
}

}  // namespace tracetwin::predictors
