// Reading a node's arguments by schema name (with a positional fallback for
// nodes without a schema), for feature extraction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.h"

namespace tracetwin::predictors {

// Index of the argument called `name` in the node's schema, else `fallback`.
size_t argIndex(const core::Node& node, const char* name, size_t fallback);
// The defined tensor at that argument, or nullptr.
const core::TensorValue* tensorArg(const core::Node& node, const char* name, size_t fallback);
// An int (or int list's first element) argument, else `dflt`.
int64_t intArg(const core::Node& node, const char* name, size_t fallback, int64_t dflt);
// An int list argument (a bare int is repeated `dims` times), else `dflt`.
std::vector<int64_t> intListArg(const core::Node& node, const char* name, size_t fallback,
                                std::vector<int64_t> dflt);
// Element `d` of an int list argument (a bare int applies to every d), else
// `dflt`. No allocation: feature extraction runs for every op of a graph.
int64_t intListElement(const core::Node& node, const char* name, size_t fallback, size_t d,
                       int64_t dflt);
// The same at an argument index found once with argIndex (convShape reads
// stride, padding and dilation per spatial dim of every convolution).
int64_t intListElementAt(const core::Node& node, size_t index, size_t d, int64_t dflt);
// Calls fn(const core::TensorValue&) on every defined tensor of `values`
// (lists flattened), in order, without collecting them (per op of a graph).
template <typename Fn>
void forEachDefinedTensor(const std::vector<core::Value>& values, Fn&& fn) {
  for (const core::Value& v : values) {
    core::forEachTensor(v, [&](const core::TensorValue& t) {
      if (t.defined()) fn(t);
    });
  }
}
// All defined tensors of the inputs (lists flattened), in order.
std::vector<const core::TensorValue*> inputTensors(const core::Node& node);
std::vector<const core::TensorValue*> outputTensors(const core::Node& node);

double product(const std::vector<int64_t>& dims, size_t from = 0, size_t to = SIZE_MAX);
// Op name without namespace and overload: "aten::add_.Tensor" -> "add_".
std::string baseOpName(const std::string& name);

// Whether every output is one of the inputs as it was (same tensor id,
// storage, offset and size) and the op mutates none of its arguments.
bool returnsAnInputAsItWas(const core::Node& node);

}  // namespace tracetwin::predictors
