#include "predictors/simulation/op_timing.h"

#include <string_view>
#include <unordered_set>

#include "predictors/simulation/op_record.h"

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

// 0: never synchronises; 1: always; 2: a copy, which does when it goes from
// a CUDA tensor to the CPU. Depends on the op's name only.
int syncKindOf(const core::Node& node) {
  static const std::unordered_set<std::string_view> kAlways = {
      "item", "_local_scalar_dense", "nonzero", "is_nonzero", "masked_select", "unique"};
  static const std::unordered_set<std::string_view> kCopies = {"to", "_to_copy", "copy_", "copy"};
  std::string_view base = baseName(node.name);
  if (kAlways.count(base)) return 1;
  return kCopies.count(base) ? 2 : 0;
}

// A device -> host copy: some CUDA input and a CPU output (for copy_, the
// CPU destination `self` is both an input and the output).
bool copiesToHost(const core::Node& node) {
  bool cuda_in = false, cpu_out = false;
  eachTensor(node.inputs, [&](const core::TensorValue& t) { cuda_in |= onCuda(t.device); });
  eachTensor(node.outputs, [&](const core::TensorValue& t) { cpu_out |= t.device == "cpu"; });
  return cuda_in && cpu_out;
}

}  // namespace

int launchesOf(std::string_view family) { return family == "view" ? 0 : 1; }

bool isSynchronising(const core::Node& node) {
  const int kind = syncKindOf(node);
  return kind == 1 || (kind == 2 && copiesToHost(node));
}

void CommDependencies::record(int64_t storage) {
  const auto bit = static_cast<uint64_t>(storage) % kFilterBits;
  filter_[bit / 64] |= uint64_t{1} << (bit % 64);
  storages_.insert(storage);
}

bool CommDependencies::touched(int64_t storage) const {
  const auto bit = static_cast<uint64_t>(storage) % kFilterBits;
  if ((filter_[bit / 64] >> (bit % 64) & 1) == 0) return false;
  return storages_.count(storage) > 0;
}

OpDependencies CommDependencies::observe(const core::Node& node, std::string_view family) {
  OpDependencies d;
  const int kind = perSchema(sync_kind_, node, [&node] { return syncKindOf(node); });
  d.synchronising = kind == 1 || (kind == 2 && copiesToHost(node));
  if (family == "comm") {
    d.comm = true;
    auto recordIt = [&](const core::TensorValue& t) { record(t.storage_id); };
    eachTensor(node.inputs, recordIt);
    eachTensor(node.outputs, recordIt);
    return d;
  }
  if (storages_.empty()) return d;
  eachTensor(node.inputs,
             [&](const core::TensorValue& t) { d.inputs_wait |= touched(t.storage_id); });
  eachTensor(node.outputs,
             [&](const core::TensorValue& t) { d.outputs_wait |= touched(t.storage_id); });
  return d;
}

void applyDependencies(const OpDependencies& d, SimOp* s) {
  s->sync = !s->cpu_only && d.synchronising;
  if (d.comm) {
    s->is_comm = true;
    return;
  }
  // On a CPU the op runs on the thread that issued the (Gloo) collective,
  // and writing its buffers waits too, as the distributed replay does.
  if (d.inputs_wait || (s->cpu_only && d.outputs_wait)) s->wait_stream = kCommStream;
}

}  // namespace tracetwin::predictors
