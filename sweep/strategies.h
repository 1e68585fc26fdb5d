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
  std::vector<int> owner;  // rank per table, in the file's order; -1: not table-wise
  // Every table's placement when one is not table-wise; empty: all table-wise (owner).
  std::vector<Placement> place;
  bool tableWiseOnly() const { return place.empty(); }
};

// Every table's placement (table-wise ones from owner).
std::vector<Placement> placementsOf(const Plan& plan);
// "t0:0 t1:rw:0+1 ...": one text per distinct plan (plans are predicted and
// measured once per key).
std::string planKey(const Plan& plan);

// Per-table predicted cost (any unit), asked for only when a plan uses
// strategy greedy.
using TableCosts = std::function<std::vector<double>()>;

// Longest first onto the least-loaded rank (ties: the lower table index
// first, the lower rank).
std::vector<int> greedyAssign(const std::vector<double>& cost, int64_t world_size);
// greedy_split: a table whose cost exceeds the per-rank fair share (the
// total over world_size) is split row-wise over every rank (each rank then
// carries cost / world_size of it); the rest go longest first onto the
// least-loaded rank, as greedyAssign. Returns every table's placement.
std::vector<Placement> greedySplitAssign(const std::vector<double>& cost, int64_t world_size);
std::vector<int> roundRobinAssign(size_t tables, int64_t world_size);
// `count` distinct random assignments (fewer when fewer exist), from `seed`.
std::vector<std::vector<int>> randomAssigns(size_t tables, int64_t world_size, int64_t count,
                                            uint64_t seed);

// Every plan of the file, in file order (a random entry becomes NAME#1..#count).
std::vector<Plan> expandPlans(const SweepSpec& spec, const TableCosts& costs);

}  // namespace tracetwin::sweep
