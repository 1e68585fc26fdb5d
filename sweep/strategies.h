// Plans from a sweep file's plan entries: explicit assignments, and the
// strategies that make them (docs/sweeps.md, "Strategies"), each a function
// in one registry.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sweep/sweep_spec.h"

namespace tracetwin::sweep {

struct Plan {
  std::string name;
  std::string strategy;
  std::vector<int> owner;  // rank per table, in the file's order
};

// Per-table predicted cost (any unit), asked for only when a plan uses
// strategy greedy.
using TableCosts = std::function<std::vector<double>()>;

// Longest first onto the least-loaded rank (ties: the lower table index
// first, the lower rank).
std::vector<int> greedyAssign(const std::vector<double>& cost, int64_t world_size);
std::vector<int> roundRobinAssign(size_t tables, int64_t world_size);
// `count` distinct random assignments (fewer when fewer exist), from `seed`.
std::vector<std::vector<int>> randomAssigns(size_t tables, int64_t world_size, int64_t count,
                                            uint64_t seed);

// Every plan of the file, in file order (a random entry becomes NAME#1..#count).
std::vector<Plan> expandPlans(const SweepSpec& spec, const TableCosts& costs);

}  // namespace tracetwin::sweep
