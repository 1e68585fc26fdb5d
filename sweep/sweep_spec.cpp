#include "sweep/sweep_spec.h"

#include <fmt/core.h>
#include <fmt/ranges.h>


#include <algorithm>
#include <map>
#include <set>

#include "core/errors.h"
#include "predictors/specs/yaml_strict.h"

namespace tracetwin::sweep {
namespace {

namespace y = predictors::yaml;

const std::vector<std::string> kStrategies = {"explicit", "round_robin", "greedy", "greedy_size",
                                              "random",   "greedy_split"};

int64_t positiveIntList(const y::MapReader& m, const YAML::Node& list, const char* key,
                        std::vector<int64_t>* out) {
  if (!list.IsSequence() || list.size() == 0) {
    m.fail(list, fmt::format("'{}' must be a non-empty list of positive integers", key));
  }
  out->clear();
  for (const YAML::Node& e : list) {
    int64_t v = 0;
    try {
      v = y::plainAs<int64_t>(e);
    } catch (const YAML::Exception&) {
      m.fail(e, fmt::format("'{}' entries must be positive integers", key));
    }
    if (v <= 0) m.fail(e, fmt::format("'{}' entries must be positive integers, got {}", key, v));
    out->push_back(v);
  }
  return int64_t(out->size());
}

bool readBool(const y::MapReader& m, const char* key) {
  const YAML::Node n = m.get(key);
  // A quoted "true" is a string, as a quoted "2" is (yaml_strict.h).
  if (!n.IsScalar() || n.Tag() == "!") m.fail(n, fmt::format("'{}' must be true or false", key));
  try {
    return n.as<bool>();
  } catch (const YAML::Exception&) {
    m.fail(n, fmt::format("'{}' must be true or false", key));
  }
}

DenseSpec readDense(const YAML::Node& node, const std::string& source) {
  y::MapReader m(node, source, "dense");
  m.checkKeys({}, {"features", "bottom_mlp", "top_mlp"});
  DenseSpec d;
  if (m.has("features")) d.features = m.positiveInt("features");
  if (m.has("bottom_mlp")) positiveIntList(m, m.get("bottom_mlp"), "bottom_mlp", &d.bottom_mlp);
  if (m.has("top_mlp")) positiveIntList(m, m.get("top_mlp"), "top_mlp", &d.top_mlp);
  return d;
}

TableSpec readTable(const YAML::Node& node, const std::string& source, size_t i) {
  y::MapReader m(node, source, fmt::format("tables[{}]", i));
  m.checkKeys({"name", "rows", "dim", "pooling"}, {"zipf"});
  TableSpec t;
  t.name = m.str("name");
  t.rows = m.positiveInt("rows");
  t.dim = m.positiveInt("dim");
  t.pooling = m.positiveInt("pooling");
  if (m.has("zipf")) t.zipf = m.positive("zipf");
  return t;
}

constexpr int kUnassigned = -2;  // PlanSpec::assign while reading
constexpr int kSplitTable = -1;  // PlanSpec::assign of a table that is not table-wise

int64_t sweepRankAt(const std::string& source, const YAML::Node& n, const std::string& plan,
                    const std::string& table, int64_t world_size) {
  int64_t rank = -1;
  try {
    rank = y::plainAs<int64_t>(n);
  } catch (const YAML::Exception&) {
    y::failAt(source, n,
              fmt::format("plan '{}': the rank of table '{}' must be an integer, or row_wise, "
                          "column_wise, data_parallel, {{row_wise: [ranks]}}, "
                          "{{column_wise: [ranks]}}",
                          plan, table));
  }
  if (rank < 0 || rank >= world_size) {
    y::failAt(source, n,
              fmt::format("plan '{}': table '{}' on rank {}, out of range 0..{} (world_size {})",
                          plan, table, rank, world_size - 1, world_size));
  }
  return rank;
}

// One table's placement in an `assign` map: a rank; row_wise, column_wise or
// data_parallel (over every rank); {row_wise: [ranks]} or {column_wise: [ranks]}.
Placement readPlacement(const std::string& source, const YAML::Node& v, const std::string& plan,
                        const TableSpec& table, int64_t world_size) {
  static const std::map<std::string, Sharding> kinds = {{"row_wise", Sharding::kRowWise},
                                                        {"column_wise", Sharding::kColumnWise},
                                                        {"data_parallel", Sharding::kDataParallel}};
  Placement p;
  std::vector<int> all(static_cast<size_t>(world_size));
  for (int r = 0; r < int(world_size); ++r) all[size_t(r)] = r;
  const YAML::Node* ranks_node = nullptr;
  YAML::Node ranks_list;
  if (v.IsScalar()) {
    auto it = kinds.find(v.Scalar());
    if (it == kinds.end()) {
      p.ranks = {int(sweepRankAt(source, v, plan, table.name, world_size))};
      return p;
    }
    p.kind = it->second;
    p.ranks = all;
  } else if (v.IsMap() && v.size() == 1) {
    const std::string key = v.begin()->first.as<std::string>();
    auto it = kinds.find(key);
    if (it == kinds.end() || it->second == Sharding::kDataParallel) {
      y::failAt(source, v.begin()->first,
                fmt::format("plan '{}', table '{}': unknown split '{}'; known: row_wise: "
                            "[ranks], column_wise: [ranks]",
                            plan, table.name, key));
    }
    p.kind = it->second;
    ranks_list = v.begin()->second;
    ranks_node = &ranks_list;
    if (!ranks_list.IsSequence() || ranks_list.size() == 0) {
      y::failAt(source, ranks_list,
                fmt::format("plan '{}', table '{}': {} needs a non-empty list of ranks", plan,
                            table.name, key));
    }
    std::set<int> seen;
    for (const YAML::Node& e : ranks_list) {
      const int r = int(sweepRankAt(source, e, plan, table.name, world_size));
      if (!seen.insert(r).second) {
        y::failAt(source, e,
                  fmt::format("plan '{}', table '{}': rank {} listed twice", plan, table.name, r));
      }
      p.ranks.push_back(r);
    }
  } else {
    y::failAt(source, v,
              fmt::format("plan '{}', table '{}': expected a rank, row_wise, column_wise, "
                          "data_parallel, {{row_wise: [ranks]}} or {{column_wise: [ranks]}}",
                          plan, table.name));
  }
  const YAML::Node& at = ranks_node != nullptr ? *ranks_node : v;
  const int64_t shards = int64_t(p.ranks.size());
  if (p.kind == Sharding::kRowWise && table.rows < shards) {
    y::failAt(source, at,
              fmt::format("plan '{}': table '{}' has {} rows, too few to split row-wise over {} "
                          "ranks",
                          plan, table.name, table.rows, shards));
  }
  if (p.kind == Sharding::kColumnWise && table.dim < shards) {
    y::failAt(source, at,
              fmt::format("plan '{}': table '{}' has dim {}, too small to split column-wise over "
                          "{} ranks",
                          plan, table.name, table.dim, shards));
  }
  return p;
}

PlanSpec readPlan(const YAML::Node& node, const std::string& source, size_t i,
                  const std::vector<TableSpec>& tables, int64_t world_size) {
  y::MapReader m(node, source, fmt::format("plans[{}]", i));
  m.checkKeys({"name"}, {"assign", "strategy", "count", "seed"});
  PlanSpec p;
  p.name = m.str("name");
  p.line = node.Mark().line + 1;
  if (m.has("assign") == m.has("strategy")) {
    m.fail(node, fmt::format("plan '{}' needs exactly one of 'assign' (table: rank) or "
                             "'strategy' ({})",
                             p.name, fmt::join(kStrategies.begin() + 1, kStrategies.end(), ", ")));
  }
  if (m.has("assign")) {
    p.strategy = "explicit";
    const YAML::Node a = m.get("assign");
    if (!a.IsMap()) m.fail(a, "'assign' must map table names to ranks ({t0: 0, t1: 1})");
    std::map<std::string, size_t> index;
    for (size_t t = 0; t < tables.size(); ++t) index[tables[t].name] = t;
    p.assign.assign(tables.size(), kUnassigned);
    std::vector<Placement> placed(tables.size());
    bool split = false;
    for (const auto& kv : a) {
      const std::string name = kv.first.as<std::string>();
      auto it = index.find(name);
      if (it == index.end()) {
        y::failAt(source, kv.first,
                  fmt::format("plan '{}' assigns unknown table '{}'", p.name, name));
      }
      if (p.assign[it->second] != kUnassigned) {
        y::failAt(source, kv.first,
                  fmt::format("plan '{}' assigns table '{}' twice", p.name, name));
      }
      const Placement place =
          readPlacement(source, kv.second, p.name, tables[it->second], world_size);
      placed[it->second] = place;
      p.assign[it->second] = place.kind == Sharding::kTableWise ? place.ranks[0] : kSplitTable;
      split = split || place.kind != Sharding::kTableWise;
    }
    for (size_t t = 0; t < tables.size(); ++t) {
      if (p.assign[t] == kUnassigned) {
        m.fail(a, fmt::format("plan '{}' assigns no rank to table '{}' (every table needs one)",
                              p.name, tables[t].name));
      }
    }
    if (split) p.place = std::move(placed);
    if (m.has("count") || m.has("seed")) {
      m.fail(node, fmt::format("plan '{}': 'count' and 'seed' are for strategy random", p.name));
    }
    return p;
  }
  p.strategy = m.str("strategy");
  if (std::find(kStrategies.begin() + 1, kStrategies.end(), p.strategy) == kStrategies.end()) {
    // "explicit" is what a plan with 'assign' is called, not a strategy to ask for.
    m.fail(m.get("strategy"),
           fmt::format("unknown strategy '{}'; known: {} (or 'assign' for an explicit plan)",
                       p.strategy, fmt::join(kStrategies.begin() + 1, kStrategies.end(), ", ")));
  }
  if (p.strategy == "random") {
    p.count = m.has("count") ? m.positiveInt("count") : 100;
    if (p.count > kMaxRandomPlans) {
      m.fail(m.get("count"),
             fmt::format("plan '{}': count {} is over the {} plans a random search may draw",
                         p.name, p.count, kMaxRandomPlans));
    }
    if (m.has("seed")) {
      try {
        p.seed = y::plainAs<uint64_t>(m.get("seed"));
      } catch (const YAML::Exception&) {
        m.fail(m.get("seed"), "'seed' must be a non-negative integer");
      }
    }
  } else if (m.has("count") || m.has("seed")) {
    m.fail(node, fmt::format("plan '{}': 'count' and 'seed' are for strategy random", p.name));
  }
  return p;
}

}  // namespace

std::string placementCode(const Placement& p) {
  switch (p.kind) {
    case Sharding::kTableWise:
      return std::to_string(p.ranks.at(0));
    case Sharding::kRowWise:
      return fmt::format("rw:{}", fmt::join(p.ranks, "+"));
    case Sharding::kColumnWise:
      return fmt::format("cw:{}", fmt::join(p.ranks, "+"));
    case Sharding::kDataParallel:
      return "dp";
  }
  return "?";
}

std::vector<Placement> tableWise(const std::vector<int>& owner) {
  std::vector<Placement> out;
  out.reserve(owner.size());
  for (int r : owner) out.push_back({Sharding::kTableWise, {r}});
  return out;
}

const std::vector<std::string>& strategyNames() { return kStrategies; }

namespace {

// Each size is capped at 2^62, their products are not: a 2^62 x 2^62 table
// wrapped to 42 KB and was planned as feasible, and a huge batch failed in
// the generated trace instead of at its line. The step's largest tensors
// (docs/sweeps.md, "The step") must count their bytes in 64 bits.
void checkStepSizes(const SweepSpec& s, const y::MapReader& m, const YAML::Node& tables) {
  constexpr double kLimit = 4611686018427387904.0;  // 2^62 bytes
  for (size_t i = 0; i < s.tables.size(); ++i) {
    const TableSpec& t = s.tables[i];
    const double weight = double(t.rows) * double(t.dim) * 4;
    if (weight > kLimit) {
      y::failAt(s.source, tables[i],
                fmt::format("table '{}': {} rows x {} dim x 4 bytes = {:g} bytes, over 2^62",
                            t.name, t.rows, t.dim, weight));
    }
  }
  const double global_batch = double(s.world_size) * double(s.batch_size);
  double widest = 0;  // of the lookups' indices (int64) and pooled rows (float)
  double pooled_dims = 0;
  for (const TableSpec& t : s.tables) {
    widest = std::max({widest, double(t.pooling) * 8, double(t.dim) * 4});
    pooled_dims += double(t.dim);
  }
  const DenseSpec& d = s.dense;
  widest = std::max({widest, (pooled_dims + double(d.features)) * 4});
  for (const int64_t w : d.bottom_mlp) widest = std::max(widest, double(w) * 4);
  for (const int64_t w : d.top_mlp) widest = std::max(widest, double(w) * 4);
  if (global_batch * widest > kLimit) {
    m.fail(m.get("batch_size"),
           fmt::format("world_size {} x batch_size {} x the widest row of the step ({:g} bytes) "
                       "is over 2^62 bytes",
                       s.world_size, s.batch_size, widest));
  }
}

}  // namespace

SweepSpec parseSweepSpec(const std::string& yaml_text, const std::string& source) {
  const YAML::Node root = y::parse(yaml_text, source);
  y::MapReader m(root, source, "sweep");
  m.checkKeys({"world_size", "batch_size", "tables", "plans"},
              {"sparse_grad", "dense", "device", "system", "memory_gb", "lr"});
  SweepSpec s;
  s.source = source;
  s.world_size = m.intFrom("world_size", 1, kMaxSweepRanks);
  s.batch_size = m.positiveInt("batch_size");
  if (m.has("sparse_grad")) s.sparse_grad = readBool(m, "sparse_grad");
  if (m.has("dense")) s.dense = readDense(m.get("dense"), source);
  for (const char* key : {"device", "system"}) {
    if (!m.has(key)) continue;
    (key == std::string("device") ? s.device : s.system) = m.str(key);  // never ''
  }
  if (m.has("memory_gb")) s.memory_bytes = m.positiveBytes("memory_gb", 1e9);
  if (m.has("lr")) s.lr = m.positive("lr");
  const YAML::Node tables = m.get("tables");
  if (!tables.IsSequence() || tables.size() == 0) {
    m.fail(tables, "'tables' must be a non-empty list of {name, rows, dim, pooling[, zipf]}");
  }
  std::set<std::string> names;
  for (size_t i = 0; i < tables.size(); ++i) {
    s.tables.push_back(readTable(tables[i], source, i));
    if (!names.insert(s.tables.back().name).second) {
      y::failAt(source, tables[i], fmt::format("table '{}' is defined twice", s.tables.back().name));
    }
  }
  checkStepSizes(s, m, tables);
  const YAML::Node plans = m.get("plans");
  if (!plans.IsSequence() || plans.size() == 0) {
    m.fail(plans, "'plans' must be a non-empty list of {name, assign | strategy}");
  }
  std::set<std::string> plan_names;
  for (size_t i = 0; i < plans.size(); ++i) {
    s.plans.push_back(readPlan(plans[i], source, i, s.tables, s.world_size));
    if (!plan_names.insert(s.plans.back().name).second) {
      y::failAt(source, plans[i], fmt::format("plan '{}' is defined twice", s.plans.back().name));
    }
  }
  return s;
}

SweepSpec loadSweepSpec(const std::string& path) {
  return parseSweepSpec(y::readTextFile(path, "a sweep file"), path);
}

}  // namespace tracetwin::sweep
