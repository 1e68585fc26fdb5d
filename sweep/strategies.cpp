#include "sweep/strategies.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "core/errors.h"

namespace tracetwin::sweep {

std::vector<int> greedyAssign(const std::vector<double>& cost, int64_t world_size) {
  std::vector<size_t> order(cost.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return cost[a] > cost[b]; });
  std::vector<double> load(size_t(world_size), 0.0);
  std::vector<int> owner(cost.size(), 0);
  for (size_t t : order) {
    const size_t r = size_t(std::min_element(load.begin(), load.end()) - load.begin());
    owner[t] = int(r);
    load[r] += cost[t];
  }
  return owner;
}

std::vector<Placement> greedySplitAssign(const std::vector<double>& cost, int64_t world_size) {
  const double total = std::accumulate(cost.begin(), cost.end(), 0.0);
  const double fair = total / double(world_size);
  std::vector<int> all(static_cast<size_t>(world_size));
  std::iota(all.begin(), all.end(), 0);
  std::vector<Placement> out(cost.size());
  std::vector<double> load(size_t(world_size), 0.0);
  std::vector<size_t> order;
  for (size_t t = 0; t < cost.size(); ++t) {
    if (world_size > 1 && cost[t] > fair) {
      out[t] = {Sharding::kRowWise, all};
      for (double& l : load) l += cost[t] / double(world_size);
    } else {
      order.push_back(t);
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return cost[a] > cost[b]; });
  for (size_t t : order) {
    const size_t r = size_t(std::min_element(load.begin(), load.end()) - load.begin());
    out[t] = {Sharding::kTableWise, {int(r)}};
    load[r] += cost[t];
  }
  return out;
}

std::vector<Placement> placementsOf(const Plan& plan) {
  return plan.place.empty() ? tableWise(plan.owner) : plan.place;
}

std::string planKey(const Plan& plan) {
  std::string key;
  for (const Placement& p : placementsOf(plan)) key += placementCode(p) + " ";
  return key;
}

std::vector<int> roundRobinAssign(size_t tables, int64_t world_size) {
  std::vector<int> owner(tables);
  for (size_t t = 0; t < tables; ++t) owner[t] = int(int64_t(t) % world_size);
  return owner;
}

std::vector<std::vector<int>> randomAssigns(size_t tables, int64_t world_size, int64_t count,
                                            uint64_t seed) {
  std::vector<std::vector<int>> out;
  if (world_size < 1 || count < 1) return out;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(0, int(world_size) - 1);
  std::set<std::vector<int>> seen;
  // A small file has fewer distinct plans than asked (world_size^tables):
  // stop once all are drawn, else after 20x the wanted draws. Drawing for
  // the count alone made `count: 100000000` over two tables and two ranks
  // spin through 2e9 draws for its four plans.
  int64_t wanted = 1;  // min(count, world_size^tables), without overflow
  for (size_t t = 0; t < tables && wanted < count; ++t) {
    wanted = wanted > count / world_size ? count : wanted * world_size;
  }
  wanted = std::min(wanted, count);
  for (int64_t tries = 0; int64_t(out.size()) < wanted && tries < 20 * wanted; ++tries) {
    std::vector<int> owner(tables);
    for (int& r : owner) r = pick(rng);
    if (seen.insert(owner).second) out.push_back(std::move(owner));
  }
  return out;
}

namespace {

using Maker = std::function<void(const SweepSpec&, const PlanSpec&, const TableCosts&,
                                 std::vector<Plan>*)>;

const std::map<std::string, Maker>& makers() {
  static const std::map<std::string, Maker> registry = {
      {"explicit",
       [](const SweepSpec&, const PlanSpec& p, const TableCosts&, std::vector<Plan>* out) {
         out->push_back({p.name, p.strategy, p.assign, p.place});
       }},
      {"round_robin",
       [](const SweepSpec& s, const PlanSpec& p, const TableCosts&, std::vector<Plan>* out) {
         out->push_back({p.name, p.strategy, roundRobinAssign(s.tables.size(), s.world_size), {}});
       }},
      {"greedy",
       [](const SweepSpec& s, const PlanSpec& p, const TableCosts& costs,
          std::vector<Plan>* out) {
         out->push_back({p.name, p.strategy, greedyAssign(costs(), s.world_size), {}});
       }},
      {"greedy_size",
       [](const SweepSpec& s, const PlanSpec& p, const TableCosts&, std::vector<Plan>* out) {
         std::vector<double> bytes;
         for (const TableSpec& t : s.tables) bytes.push_back(double(t.bytes()));
         out->push_back({p.name, p.strategy, greedyAssign(bytes, s.world_size), {}});
       }},
      {"greedy_split",
       [](const SweepSpec& s, const PlanSpec& p, const TableCosts& costs,
          std::vector<Plan>* out) {
         Plan plan{p.name, p.strategy, {}, greedySplitAssign(costs(), s.world_size)};
         bool split = false;
         for (const Placement& pl : plan.place) {
           plan.owner.push_back(pl.kind == Sharding::kTableWise ? pl.ranks[0] : -1);
           split = split || pl.kind != Sharding::kTableWise;
         }
         if (!split) plan.place.clear();
         out->push_back(std::move(plan));
       }},
      {"random",
       [](const SweepSpec& s, const PlanSpec& p, const TableCosts&, std::vector<Plan>* out) {
         const auto owners = randomAssigns(s.tables.size(), s.world_size, p.count, p.seed);
         for (size_t k = 0; k < owners.size(); ++k) {
           out->push_back({fmt::format("{}#{}", p.name, k + 1), p.strategy, owners[k], {}});
         }
       }},
  };
  return registry;
}

}  // namespace

std::vector<Plan> expandPlans(const SweepSpec& spec, const TableCosts& costs) {
  std::vector<double> cached;
  bool have = false;
  const TableCosts once = [&]() {
    if (!have) {
      cached = costs();
      have = true;
    }
    return cached;
  };
  std::vector<Plan> plans;
  for (const PlanSpec& p : spec.plans) {
    auto it = makers().find(p.strategy);
    if (it == makers().end()) {
      throw UsageError(fmt::format("{}: plan '{}': unknown strategy '{}'", spec.source, p.name,
                                   p.strategy));
    }
    it->second(spec, p, once, &plans);
  }
  return plans;
}

}  // namespace tracetwin::sweep
