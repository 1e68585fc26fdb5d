// Finds the registered operator for a recorded schema, falling back to a
// compatible overload (by argument names and types) when the trace comes from
// a newer PyTorch whose overload this LibTorch lacks. Replay-private.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/graph.h"

namespace tracetwin::replay {

struct ResolvedOp {
  c10::OperatorHandle handle;
  // For each registered argument, the index into node.inputs, or -1 for its default.
  std::vector<int> recorded_index;
  std::string mapping;  // set when another overload stands in: "aten::x.new -> aten::x.old (...)"
};

class OpResolver {
 public:
  // nullopt with *reason set when nothing registered fits.
  std::optional<ResolvedOp> resolve(const core::Node& node, std::string* reason);

 private:
  const std::vector<c10::OperatorName>& overloadsOf(const std::string& name);
  std::unordered_map<std::string, std::vector<c10::OperatorName>> overloads_;
  bool indexed_ = false;
};

// Maps recorded arguments onto a registered schema by name (positionally when
// the recorded schema has no names). Returns the score of the fit (higher is
// better) or nullopt when a required argument is missing. Exposed for tests.
std::optional<int> mapArguments(const core::Node& node, const c10::FunctionSchema& schema,
                                std::vector<int>* recorded_index);

}  // namespace tracetwin::replay
