#include "sweep/sweep_output.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "sweep/step_trace.h"

namespace tracetwin::sweep {

namespace {

using J = nlohmann::json;

// One plan: its shards per rank, its assignment, its prediction.
J planJson(const SweepSpec& spec, const PlanResult& p) {
  const std::vector<Placement> place = placementsOf(p.plan);
  const std::vector<Shard> shards = planShards(spec, place);  // once, not once per rank
  J ranks = J::array();
  for (const RankResult& r : p.ranks) {
    J tables = J::array();
    for (const Shard& sh : shards) {
      if (sh.rank != r.rank) continue;
      const std::string& name = spec.tables[size_t(sh.table)].name;
      if (sh.kind == Sharding::kTableWise) {
        tables.push_back(name);
      } else if (sh.kind == Sharding::kRowWise) {
        tables.push_back(
            fmt::format("{}[rows {}..{})", name, sh.row_begin, sh.row_begin + sh.rows));
      } else if (sh.kind == Sharding::kColumnWise) {
        tables.push_back(fmt::format("{}[cols {}..{})", name, sh.col_begin, sh.col_begin + sh.dim));
      } else {
        tables.push_back(name + "[data-parallel]");
      }
    }
    ranks.push_back(J{{"rank", r.rank},
                      {"iteration_ms", r.iteration_ms},
                      {"embedding_ms", r.embedding_ms},
                      {"dense_ms", r.dense_ms},
                      {"comm_ms", r.comm_ms},
                      {"wait_ms", r.wait_ms},
                      {"memory_bytes", r.memory_bytes},
                      {"tables", std::move(tables)}});
  }
  // Table-wise: the rank; else the placement's code ("rw:0+1", "cw:0+1", "dp").
  J assignment = J::object(), owner = J::array();
  for (size_t t = 0; t < place.size(); ++t) {
    const J code =
        place[t].kind == Sharding::kTableWise ? J(place[t].ranks[0]) : J(placementCode(place[t]));
    assignment[spec.tables[t].name] = code;
    owner.push_back(code);
  }
  J entry = {{"name", p.plan.name},
             {"strategy", p.plan.strategy},
             {"predicted_by", p.predicted_by},
             {"feasible", p.feasible},
             {"ranks", std::move(ranks)},
             {"assignment", std::move(assignment)},
             {"owner", std::move(owner)}};
  if (p.feasible) {
    entry["predicted_ms"] = p.predicted_ms;
    entry["imbalance"] = p.imbalance;
  } else {
    entry["predicted_ms"] = nullptr;
    entry["infeasible"] = p.infeasible;
  }
  return entry;
}

// Everything but the plans.
J headerJson(const SweepSpec& spec, const std::vector<PlanResult>& ranked,
             const std::string& device) {
  J tables = J::array();
  for (const TableSpec& t : spec.tables) {
    J e = {{"name", t.name}, {"rows", t.rows}, {"dim", t.dim}, {"pooling", t.pooling}};
    if (t.zipf) e["zipf"] = *t.zipf;
    tables.push_back(std::move(e));
  }
  J out = {{"sweep", spec.source},
           {"world_size", spec.world_size},
           {"batch_size", spec.batch_size},
           {"sparse_grad", spec.sparse_grad},
           {"device", device},
           {"tables", std::move(tables)}};
  out["best_predicted"] =
      !ranked.empty() && ranked[0].feasible ? J(ranked[0].plan.name) : J(nullptr);
  return out;
}

}  // namespace

std::string sweepJsonText(const SweepSpec& spec, const std::vector<PlanResult>& ranked,
                          const std::string& device, const nlohmann::json& extra) {
  J header = headerJson(spec, ranked, device);
  if (extra.is_object()) header.update(extra);
  std::string out = "{\n";
  for (const auto& [key, value] : header.items()) {
    out += fmt::format("  {}: {},\n", J(key).dump(), value.dump());
  }
  // A plan per line, each built and dropped in turn.
  out += "  \"plans\": [";
  for (size_t k = 0; k < ranked.size(); ++k) {
    out += k ? ",\n    " : "\n    ";
    out += planJson(spec, ranked[k]).dump();
  }
  out += ranked.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return out;
}

nlohmann::json sweepJson(const SweepSpec& spec, const std::vector<PlanResult>& ranked,
                         const std::string& device) {
  return J::parse(sweepJsonText(spec, ranked, device));
}

std::string sweepCsv(const SweepSpec& spec, const std::vector<PlanResult>& ranked) {
  std::string out = "rank_order,plan,strategy,predicted_by,feasible,predicted_ms,imbalance";
  for (int r = 0; r < spec.world_size; ++r) {
    out += fmt::format(",r{0}_embedding_ms,r{0}_dense_ms,r{0}_comm_ms,r{0}_wait_ms", r);
  }
  out += ",assignment\n";
  for (size_t k = 0; k < ranked.size(); ++k) {
    const PlanResult& p = ranked[k];
    out += fmt::format("{},{},{},{},{},{},{:.4f}", k + 1, p.plan.name, p.plan.strategy,
                       p.predicted_by, p.feasible ? 1 : 0,
                       p.feasible ? fmt::format("{:.4f}", p.predicted_ms) : "", p.imbalance);
    for (const RankResult& r : p.ranks) {
      out += fmt::format(",{:.4f},{:.4f},{:.4f},{:.4f}", r.embedding_ms, r.dense_ms, r.comm_ms,
                         r.wait_ms);
    }
    std::vector<std::string> codes;
    for (const Placement& pl : placementsOf(p.plan)) codes.push_back(placementCode(pl));
    out += fmt::format(",{}\n", fmt::join(codes, " "));
  }
  return out;
}

}  // namespace tracetwin::sweep
