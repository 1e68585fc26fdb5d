#include "calibration/comm_sweep.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "core/errors.h"
#include "predictors/comm/sync_jitter.h"

namespace tracetwin::calibration {
namespace {

constexpr int64_t kFloatBytes = 4;
constexpr int64_t kStorage = 1000000;  // the one storage every collective reads

// How each collective of the grid is recorded: its record_param_comms name
// (what PyTorch's ProcessGroups record) and its input / output elements for
// a buffer of `n` floats on `p` ranks (nccl-tests' size is the buffer).
struct Shape {
  const char* recorded_name;
  int64_t in, out;
};

Shape shapeOf(const std::string& collective, int64_t n, int64_t p) {
  if (collective == "all_reduce") return {"allreduce", n, n};
  if (collective == "all_gather") return {"_allgather_base", n / p, n};
  if (collective == "reduce_scatter") return {"_reduce_scatter_base", n, n / p};
  if (collective == "all_to_all") return {"all_to_all", n, n};
  if (collective == "broadcast") return {"broadcast", n, n};
  throw UsageError(fmt::format(
      "calibrate comm: unknown collective '{}' (known: all_reduce, all_gather, reduce_scatter, "
      "all_to_all, broadcast)",
      collective));
}

nlohmann::json attrs(int64_t rf_id, int64_t tid) {
  auto attr = [](const char* name, const char* type, nlohmann::json v) {
    return nlohmann::json{{"name", name}, {"type", type}, {"value", std::move(v)}};
  };
  return nlohmann::json::array({attr("rf_id", "uint64", rf_id), attr("fw_parent", "uint64", 0),
                                attr("seq_id", "int64", -1), attr("scope", "uint64", 0),
                                attr("tid", "uint64", tid), attr("fw_tid", "uint64", 0),
                                attr("op_schema", "string", "")});
}

nlohmann::json noValues() {
  return {{"values", nlohmann::json::array()},
          {"shapes", nlohmann::json::array()},
          {"types", nlohmann::json::array()}};
}

nlohmann::json label(int64_t id, int64_t parent, const char* name, int64_t tid) {
  return {{"id", id},           {"name", name},         {"ctrl_deps", parent},
          {"inputs", noValues()}, {"outputs", noValues()}, {"attrs", attrs(id, tid)}};
}

// The compute before a measured collective: an n x n by n x n mm whose
// operands are views of the collectives' storage (so it waits for the
// collective before it) and whose result has a storage of its own.
nlohmann::json spacerMm(int64_t id, int64_t n, const std::string& device, int64_t* tensor_id) {
  using J = nlohmann::json;
  const int64_t numel = n * n;
  const J a = J::array({(*tensor_id)++, kStorage, 0, numel, kFloatBytes, device});
  const J b = J::array({(*tensor_id)++, kStorage, numel, numel, kFloatBytes, device});
  const J c = J::array({(*tensor_id)++, kStorage + id, 0, numel, kFloatBytes, device});
  const J square = J::array({n, n});
  J node = label(id, 2, "aten::mm", 1);
  node["attrs"].back()["value"] = "aten::mm(Tensor self, Tensor mat2) -> Tensor";
  node["inputs"] = J{{"values", J::array({a, b})},
                     {"shapes", J::array({square, square})},
                     {"types", J::array({"Tensor(float)", "Tensor(float)"})}};
  node["outputs"] = J{{"values", J::array({c})},
                      {"shapes", J::array({square})},
                      {"types", J::array({"Tensor(float)"})}};
  return node;
}

}  // namespace

void checkCommGrid(const CommGrid& grid) {
  for (const std::string& c : grid.collectives) shapeOf(c, 1, 1);
  for (int p : grid.group_sizes) {
    if (p < 2) throw UsageError(fmt::format("calibrate comm: group size {} < 2", p));
    for (int64_t bytes : grid.sizes_bytes) {
      if (bytes < kFloatBytes * p) {
        throw UsageError(fmt::format("calibrate comm: {} bytes is less than one float per rank "
                                     "on {} ranks",
                                     bytes, p));
      }
    }
  }
  if (grid.copies < 1) throw UsageError("calibrate comm: copies < 1");
  if (grid.spacer_mm < 0) {
    throw UsageError(fmt::format("calibrate comm: spacer mm size {} < 0", grid.spacer_mm));
  }
}

std::string commSweepTrace(const CommGrid& grid, int group_size, const std::string& device,
                           std::vector<CommSweepCase>* cases) {
  checkCommGrid(grid);
  nlohmann::json nodes = nlohmann::json::array();
  nodes.push_back(label(1, 1, "[pytorch|profiler|execution_trace|process]", 0));
  nodes.push_back(label(2, 1, "[pytorch|profiler|execution_trace|thread]", 1));
  int64_t id = 3, tensor_id = 10, seq = 0;
  const int64_t p = group_size;
  // Lead-in all-reduces, not measured: the first collective after the
  // iteration's barrier ran ~10x its time in a first 2-rank sweep here
  // (2.1 ms for 1 KiB, 0.4 ms for 64 KiB after it).
  std::vector<std::pair<std::string, int64_t>> points;
  for (int k = 0; k < 2; ++k) points.push_back({"lead-in", 1024});
  for (const std::string& collective : grid.collectives) {
    for (int64_t bytes : grid.sizes_bytes) points.push_back({collective, bytes});
  }
  for (const auto& [name, bytes] : points) {
    const bool lead_in = name == "lead-in";
    const std::string collective = lead_in ? "all_reduce" : name;
    {
      // Whole floats per rank: every chunk of a scatter is the same size.
      const int64_t n = bytes / kFloatBytes / p * p;
      const Shape s = shapeOf(collective, n, p);
      for (int copy = 0; copy < (lead_in ? 1 : grid.copies); ++copy) {
        using J = nlohmann::json;
        if (!lead_in && grid.spacer_mm > 0) {
          nodes.push_back(spacerMm(id++, grid.spacer_mm, device, &tensor_id));
        }
        const J in = J::array({tensor_id++, kStorage, 0, s.in, kFloatBytes, device});
        const J out = J::array({tensor_id++, kStorage + id, 0, s.out, kFloatBytes, device});
        const J empty = J::array();
        J node = label(id, 2, "record_param_comms", 1);
        // 1.0.2: [tensors], seq, pg id, rank, name, in_split, out_split, world size
        J values = J::array({J::array({in}), seq++, 0, 0, s.recorded_name, empty, empty, p});
        J shapes = J::array({J::array({J::array({s.in})}), empty, empty, empty, empty, empty,
                             empty, empty});
        J types = J::array({"GenericList[Tensor(float)]", "Int", "Int", "Int", "String",
                            "GenericList[]", "GenericList[]", "Int"});
        node["inputs"] = J{{"values", values}, {"shapes", shapes}, {"types", types}};
        node["outputs"] = J{{"values", J::array({J::array({out})})},
                            {"shapes", J::array({J::array({J::array({s.out})})})},
                            {"types", J::array({"GenericList[Tensor(float)]"})}};
        nodes.push_back(std::move(node));
        if (!lead_in) cases->push_back({id, collective, n * kFloatBytes});
        ++id;
      }
    }
  }
  nlohmann::json trace = {{"schema", "1.0.2-chakra.0.0.4"},
                          {"pid", 1},
                          {"time", "tracetwin calibrate --families comm"},
                          {"start_ts", 0},
                          {"finish_ts", 0},
                          {"nodes", std::move(nodes)}};
  return trace.dump();
}

std::vector<predictors::CommSample> commSamplesFromReport(const nlohmann::json& merged,
                                                          const std::vector<CommSweepCase>& cases,
                                                          int group_size) {
  std::map<core::NodeId, const CommSweepCase*> by_node;
  for (const CommSweepCase& c : cases) by_node[c.node] = &c;
  std::vector<predictors::CommSample> out;
  std::set<core::NodeId> seen;
  if (!merged.contains("ranks") || !merged["ranks"].is_array()) {
    throw InputError("calibrate comm: the distributed replay's report has no 'ranks'");
  }
  for (const nlohmann::json& rank : merged["ranks"]) {
    for (const nlohmann::json& call : rank.value("collectives", nlohmann::json::array())) {
      auto it = by_node.find(call.value("id", core::kNoNode));
      if (it == by_node.end()) continue;
      seen.insert(it->first);
      out.push_back({it->second->collective, group_size, double(it->second->bytes),
                     call.value("transfer_mean_us", call.value("transfer_us", 0.0)) * 1e-6});
    }
  }
  for (const CommSweepCase& c : cases) {
    if (!seen.count(c.node)) {
      throw InputError(fmt::format(
          "calibrate comm: the replay on {} ranks reported no time for {} of {} bytes (node {}); "
          "see its skipped and failed ops",
          group_size, c.collective, c.bytes, c.node));
    }
  }
  return out;
}

CommJitterSample commJitterFromReport(const nlohmann::json& merged,
                                      const std::vector<CommSweepCase>& cases, int group_size) {
  std::set<core::NodeId> measured;
  for (const CommSweepCase& c : cases) measured.insert(c.node);
  CommJitterSample out;
  out.group_size = group_size;
  double wait_sum = 0, spacer_sum = 0;
  int64_t waits = 0, spacers = 0;
  for (const nlohmann::json& rank : merged.value("ranks", nlohmann::json::array())) {
    for (const nlohmann::json& call : rank.value("collectives", nlohmann::json::array())) {
      if (!measured.count(call.value("id", core::kNoNode))) continue;
      wait_sum += call.value("wait_mean_us", call.value("wait_us", 0.0));
      ++waits;
    }
    // The spacers are the sweep's only gemm: their time where they ran.
    const nlohmann::json gemm =
        rank.value("families", nlohmann::json::object()).value("gemm", nlohmann::json::object());
    const double count = gemm.value("count", 0.0);
    const double us =
        gemm.value("device_us", 0.0) > 0 ? gemm.value("device_us", 0.0) : gemm.value("cpu_us", 0.0);
    if (count > 0 && us > 0) {
      spacer_sum += us / count;
      ++spacers;
    }
  }
  if (waits == 0 || spacers == 0) {
    throw InputError(fmt::format(
        "calibrate comm: the replay on {} ranks reported {} for the arrival jitter", group_size,
        waits == 0 ? "no waits at the collectives" : "no time for the spacer mm"));
  }
  out.mean_wait_us = wait_sum / double(waits);
  out.spacer_us = spacer_sum / double(spacers);
  out.variance_per_us =
      predictors::jitterVarianceFromWait(group_size, out.mean_wait_us, out.spacer_us);
  return out;
}

}  // namespace tracetwin::calibration
