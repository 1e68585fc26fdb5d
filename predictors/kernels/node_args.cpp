#include "predictors/kernels/node_args.h"

#include <algorithm>
#include <string_view>

namespace tracetwin::predictors {

size_t argIndex(const core::Node& node, const char* name, size_t fallback) {
  if (node.schema) {
    // One strlen, then lengths first: features look up a handful of names
    // in every op's schema.
    const std::string_view wanted(name);
    const auto& args = node.schema->arguments;
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].name.size() == wanted.size() && std::string_view(args[i].name) == wanted)
        return i;
    }
  }
  return fallback;
}

const core::TensorValue* tensorArg(const core::Node& node, const char* name, size_t fallback) {
  size_t i = argIndex(node, name, fallback);
  if (i >= node.inputs.size()) return nullptr;
  const core::Value& v = node.inputs[i];
  if (!v.isTensor() || !v.tensor->defined()) return nullptr;
  return &*v.tensor;
}

int64_t intArg(const core::Node& node, const char* name, size_t fallback, int64_t dflt) {
  size_t i = argIndex(node, name, fallback);
  if (i >= node.inputs.size()) return dflt;
  const core::Value& v = node.inputs[i];
  if (v.kind == core::ValueKind::kInt || v.kind == core::ValueKind::kBool) {
    return v.kind == core::ValueKind::kBool ? v.bool_value : v.int_value;
  }
  if (v.isList() && !v.elements.empty() && v.elements[0].kind == core::ValueKind::kInt) {
    return v.elements[0].int_value;
  }
  return dflt;
}

std::vector<int64_t> intListArg(const core::Node& node, const char* name, size_t fallback,
                                std::vector<int64_t> dflt) {
  size_t i = argIndex(node, name, fallback);
  if (i >= node.inputs.size()) return dflt;
  const core::Value& v = node.inputs[i];
  if (v.kind == core::ValueKind::kInt) return std::vector<int64_t>(dflt.size(), v.int_value);
  if (!v.isList()) return dflt;
  std::vector<int64_t> out;
  for (const core::Value& e : v.elements) {
    if (e.kind != core::ValueKind::kInt) return dflt;
    out.push_back(e.int_value);
  }
  return out.empty() ? dflt : out;
}

int64_t intListElement(const core::Node& node, const char* name, size_t fallback, size_t d,
                       int64_t dflt) {
  return intListElementAt(node, argIndex(node, name, fallback), d, dflt);
}

int64_t intListElementAt(const core::Node& node, size_t i, size_t d, int64_t dflt) {
  if (i >= node.inputs.size()) return dflt;
  const core::Value& v = node.inputs[i];
  if (v.kind == core::ValueKind::kInt) return v.int_value;
  if (!v.isList() || d >= v.elements.size() || v.elements[d].kind != core::ValueKind::kInt)
    return dflt;
  return v.elements[d].int_value;
}

namespace {
std::vector<const core::TensorValue*> collect(const std::vector<core::Value>& values) {
  std::vector<const core::TensorValue*> out;
  forEachDefinedTensor(values, [&](const core::TensorValue& t) { out.push_back(&t); });
  return out;
}
}  // namespace

std::vector<const core::TensorValue*> inputTensors(const core::Node& node) {
  return collect(node.inputs);
}
std::vector<const core::TensorValue*> outputTensors(const core::Node& node) {
  return collect(node.outputs);
}

double product(const std::vector<int64_t>& dims, size_t from, size_t to) {
  double p = 1.0;
  const size_t end = std::min(to, dims.size());
  if (from >= end) return p;
  for (auto it = dims.begin() + static_cast<std::ptrdiff_t>(from);
       it != dims.begin() + static_cast<std::ptrdiff_t>(end); ++it) {
    p *= static_cast<double>(std::max<int64_t>(*it, 1));
  }
  return p;
}

std::string baseOpName(const std::string& name) {
  // After the last "::" (a loop over characters: std::string::rfind with a
  // two-character needle calls memcmp at every position, and convolution
  // and GEMM shapes ask for every op's base name).
  size_t start = 0;
  for (size_t i = name.size(); i >= 2; --i) {
    if (name[i - 2] == ':' && name[i - 1] == ':') {
      start = i;
      break;
    }
  }
  size_t dot = name.find('.', start);
  return name.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
}

// An op that returned one of its inputs as it was: the same tensor (id,
// storage, offset, size), from an op that mutates none of its arguments
// (no `(a!)` in its schema; a schema is needed to tell an `out=` variant
// apart). ATen's dropout with p = 0 or in eval mode returns its input:
// transformer_big's four took 4-12 us replayed, and the elementwise model
// on their 8-32 MB put them at 3.5-47 ms.
bool returnsAnInputAsItWas(const core::Node& node) {
  if (!node.schema || node.outputs.empty()) return false;
  for (const core::SchemaArgument& a : node.schema->arguments)
    if (a.is_mutable) return false;
  bool any = false;
  for (const core::Value& out : node.outputs) {
    if (!out.isTensor() || !out.tensor->defined()) return false;
    const core::TensorValue& o = *out.tensor;
    bool found = false;
    for (const core::Value& in : node.inputs) {
      if (!in.isTensor()) continue;
      const core::TensorValue& i = *in.tensor;
      found = found || (i.tensor_id == o.tensor_id && i.storage_id == o.storage_id &&
                        i.offset == o.offset && i.numel == o.numel);
    }
    if (!found) return false;
    any = true;
  }
  return any;
}

}  // namespace tracetwin::predictors
