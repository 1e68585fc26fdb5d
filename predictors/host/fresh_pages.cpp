#include "predictors/host/fresh_pages.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "core/op_family.h"
#include "predictors/kernels/feature_shapes.h"

namespace tracetwin::predictors {

namespace {

bool anyLarge(const std::vector<core::Value>& values) {
  bool large = false;
  for (const core::Value& v : values) {
    core::forEachTensor(v, [&](const core::TensorValue& t) {
      large = large || (t.defined() && t.bytes() >= kMmapThresholdBytes);
    });
  }
  return large;
}

// The outputs' part of freshMappedBytes.
double freshOutputBytes(const core::Node& op) {
  std::vector<int64_t> inputs;
  for (const core::Value& v : op.inputs)
    core::forEachTensor(v, [&](const core::TensorValue& t) { inputs.push_back(t.storage_id); });
  std::vector<std::pair<int64_t, int64_t>> fresh;  // storage -> largest tensor bytes
  for (const core::Value& v : op.outputs) {
    core::forEachTensor(v, [&](const core::TensorValue& t) {
      if (!t.defined() || t.bytes() < kMmapThresholdBytes) return;
      if (std::find(inputs.begin(), inputs.end(), t.storage_id) != inputs.end()) return;
      auto it = std::find_if(fresh.begin(), fresh.end(),
                             [&](const auto& f) { return f.first == t.storage_id; });
      if (it == fresh.end()) {
        fresh.push_back({t.storage_id, t.bytes()});
      } else {
        it->second = std::max(it->second, t.bytes());
      }
    });
  }
  double bytes = 0;
  for (const auto& f : fresh) bytes += double(f.second);
  return bytes;
}

}  // namespace

FreshBytes freshMappedBytes(const core::Node& op) {
  // Every op of a graph comes here, and almost none has a tensor that large:
  // look before allocating anything.
  const bool large_out = anyLarge(op.outputs);
  if (!large_out && !anyLarge(op.inputs)) return {};
  return {large_out ? freshOutputBytes(op) : 0.0, oneDnnReorderBytes(op)};
}

double freshSparseBytes(const core::Node& op, const core::SparseTensors& sparse) {
  if (sparse.empty()) return 0;
  // Views of a sparse tensor share its arrays; in-place ops work on them
  // (zero_ clears, mul_ scales, _coalesced_ flags), except add_, which
  // concatenates the other operand's indices and values into new ones.
  static const char* const kViews[] = {"aten::detach",  "aten::alias",   "aten::_indices",
                                       "aten::_values", "aten::indices", "aten::values"};
  for (const char* name : kViews)
    if (op.name == name) return 0;
  const std::string_view name = op.name;
  if (!name.empty() && name.back() == '_' && name != "aten::add_") return 0;
  double bytes = 0;
  std::vector<int64_t> seen;
  for (const core::Value& v : op.outputs) {
    core::forEachTensor(v, [&](const core::TensorValue& t) {
      const auto it = sparse.find(t.tensor_id);
      if (it == sparse.end() || it->second.nnz <= 0 || t.shape.empty()) return;
      if (std::find(seen.begin(), seen.end(), t.tensor_id) != seen.end()) return;
      seen.push_back(t.tensor_id);
      const int64_t sparse_dim =
          std::clamp<int64_t>(it->second.sparse_dim, 1, int64_t(t.shape.size()));
      double row = double(core::dtypeItemsize(t.dtype));  // recorded without bytes
      for (size_t d = size_t(sparse_dim); d < t.shape.size(); ++d) row *= double(t.shape[d]);
      const double values = double(it->second.nnz) * row;
      const double indices = double(it->second.nnz) * double(sparse_dim) * 8;
      for (double array : {values, indices})
        if (array >= double(kMmapThresholdBytes)) bytes += array;
    });
  }
  return bytes;
}

double oneDnnReorderBytes(const core::Node& op) {
  if (core::opFamily(op) != "conv" || convShape(op).cpu_native_path) return 0;
  // The filter is small next to the activations; a tensor counts once per
  // side (an in-place output is its input).
  double bytes = 0;
  auto add = [&](const core::TensorValue& t) {
    if (t.defined() && t.bytes() >= kMmapThresholdBytes && t.shape.size() >= 3)
      bytes += double(t.bytes());
  };
  for (const core::Value& v : op.inputs) core::forEachTensor(v, add);
  for (const core::Value& v : op.outputs) core::forEachTensor(v, add);
  return bytes;
}

}  // namespace tracetwin::predictors
