// A sweep's ranked plans as files (`tracetwin sweep --json-out`, `--csv`).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sweep/sweep_run.h"
#include "sweep/sweep_spec.h"

namespace tracetwin::sweep {

// {"plans": [{name, strategy, feasible, predicted_ms, imbalance, ranks,
// assignment}], "best_predicted": name, "world_size", "tables": [...]} plus
// the members of `extra` (an object, or null), as text: the header pretty,
// then a plan per line, each built and dropped in turn. A sweep of a million
// plans is GBs of JSON; as one nlohmann::json tree it was five times that in
// memory.
std::string sweepJsonText(const SweepSpec& spec, const std::vector<PlanResult>& ranked,
                          const std::string& device, const nlohmann::json& extra = nullptr);
// The same, parsed (for tests and small sweeps).
nlohmann::json sweepJson(const SweepSpec& spec, const std::vector<PlanResult>& ranked,
                         const std::string& device);
std::string sweepCsv(const SweepSpec& spec, const std::vector<PlanResult>& ranked);

}  // namespace tracetwin::sweep
