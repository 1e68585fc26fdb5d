// Device-specific ops (cuDNN, MIOpen) do not exist on a CPU host: each is
// rewritten into its generic ATen twin, before resolution in a replay and
// before the models in a prediction of CPU times. The rewrite works on
// core::Node (argument order, dropped/added arguments, fewer outputs), so it
// is torch-free and unit-tested on its own.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/graph.h"

namespace tracetwin::core {

struct SubstitutionRule {
  std::string to;           // qualified name of the twin, "aten::native_batch_norm"
  std::string to_schema;    // its schema string (parsed into the rewritten node)
  std::string description;  // what differs, for docs and reports
  // Recorded inputs of the device op -> inputs of the twin, in schema order.
  std::function<std::vector<core::Value>(const core::Node&)> map_inputs;
  // Twin output i is the device op's recorded output output_map[i]; recorded
  // outputs not listed (cuDNN's reserve space) are never produced.
  std::vector<size_t> output_map;
};

// Registry keyed by the device op's qualified name ("aten::cudnn_batch_norm").
const std::vector<std::pair<std::string, SubstitutionRule>>& substitutionRegistry();

// The rewritten node when `node` has a rule and replay runs on a CPU
// (`target_is_cpu`); nullopt otherwise. Throws InputError when the recorded
// inputs do not fit the rule (node id and counts in the message).
std::optional<core::Node> substituteForDevice(const core::Node& node, bool target_is_cpu);

}  // namespace tracetwin::core
