#include "cli/rank_report.h"

#include <fmt/core.h>

#include <map>
#include <set>

#include "core/errors.h"
#include "core/statistics.h"

namespace tracetwin::cli {
namespace {

// Per family of the rank's replayed ops: count, CPU and device time (us).
nlohmann::json familyTotals(const nlohmann::json& r) {
  struct Total {
    int64_t count = 0;
    double cpu_us = 0, device_us = 0;
  };
  std::map<std::string, Total> totals;
  for (const nlohmann::json& op : r.value("per_op", nlohmann::json::array())) {
    Total& t = totals[op.value("family", std::string("other"))];
    ++t.count;
    t.cpu_us += op.value("cpu_us", 0.0);
    t.device_us += op.value("device_us", 0.0);
  }
  nlohmann::json fam = nlohmann::json::object();
  for (const auto& [family, t] : totals)
    fam[family] = {{"count", t.count}, {"cpu_us", t.cpu_us}, {"device_us", t.device_us}};
  return fam;
}

// The ops the rank did not time (skipped or failed with no stand-in), for a
// prediction of the same graph (`compare --nproc`).
nlohmann::json leftOut(const nlohmann::json& r) {
  std::set<int64_t> ids;
  for (const char* key : {"skipped", "failed"}) {
    for (const nlohmann::json& op : r.value(key, nlohmann::json::array()))
      ids.insert(op.value("id", int64_t(-1)));
  }
  for (const nlohmann::json& p : r.value("placeholders", nlohmann::json::array()))
    ids.erase(p.value("id", int64_t(-1)));
  return ids;
}

// The mean of a JSON array of numbers (0 for none or not an array).
double meanOf(const nlohmann::json& values) {
  std::vector<double> v;
  if (values.is_array()) {
    for (const nlohmann::json& x : values) {
      if (x.is_number()) v.push_back(x.get<double>());
    }
  }
  return core::mean(v);
}

nlohmann::json rankEntry(const nlohmann::json& r) {
  const nlohmann::json& d = r.at("distributed");
  nlohmann::json e = {
      {"rank", d.at("rank")},
      {"host", d.value("host", "")},
      {"device", r.value("device", "")},
      {"trace", r.value("trace", "")},
      {"iteration_ms_median", r.value("iteration_ms_median", 0.0)},
      {"iteration_ms_mean", meanOf(r.value("iterations_ms", nlohmann::json()))},
      {"iterations_ms", r.value("iterations_ms", nlohmann::json::array())},
      {"coverage", r.value("coverage", 0.0)},
      {"selected_ops", r.value("selected_ops", 0)},
      {"replayed_ops", r.value("replayed_ops", 0)},
      {"skipped", r.value("skipped", nlohmann::json::array()).size()},
      {"failed", r.value("failed", nlohmann::json::array()).size()},
      {"comm_ops", d.value("comm_ops", 0)},
      {"comm_ms", d.value("comm_ms", 0.0)},
      {"wait_ms", d.value("wait_ms", 0.0)},
      {"transfer_ms", d.value("transfer_ms", 0.0)},
      // Reports from before the means: the medians stand in.
      {"wait_mean_ms", d.value("wait_mean_ms", d.value("wait_ms", 0.0))},
      {"transfer_mean_ms", d.value("transfer_mean_ms", d.value("transfer_ms", 0.0))},
      {"collectives", d.value("collectives", nlohmann::json::array())},
      {"backend_notes", d.value("backend_notes", nlohmann::json::array())},
      {"families", familyTotals(r)},
      {"left_out_ops", leftOut(r)}};
  if (r.contains("zipf_lookups")) e["zipf_lookups"] = r.at("zipf_lookups");  // --index-distribution
  if (r.contains("original_iteration_ms")) {
    e["original_iteration_ms"] = r.at("original_iteration_ms");
    e["ratio"] = r.value("ratio", 0.0);
  }
  if (r.contains("fidelity")) e["fidelity"] = r.at("fidelity");
  // Each rank applies its own rank's recorded host time (its own Kineto trace).
  if (r.contains("host_time")) e["host_time"] = r.at("host_time");
  return e;
}

}  // namespace

nlohmann::json mergeRankReports(const std::vector<std::string>& reports) {
  std::vector<nlohmann::json> parsed;
  for (size_t r = 0; r < reports.size(); ++r) {
    try {
      parsed.push_back(nlohmann::json::parse(reports[r]));
      if (!parsed.back().contains("distributed")) throw InputError("no \"distributed\" object");
    } catch (const std::exception& e) {
      throw InputError(fmt::format("the report of rank {} is not a distributed replay report: {}",
                                   r, e.what()));
    }
  }
  if (parsed.empty()) throw InputError("no rank reports to merge");
  nlohmann::json merged = parsed[0];
  const nlohmann::json& d0 = merged.at("distributed");
  merged["world_size"] = d0.value("world_size", int(parsed.size()));
  merged["backend"] = d0.value("backend", "");
  merged["launcher"] = d0.value("launcher", "");
  merged["rank0_iteration_ms_median"] = merged.value("iteration_ms_median", 0.0);
  merged["iteration_ms_median"] = d0.value("step_ms_median", 0.0);
  merged["step_ms"] = d0.value("step_ms", nlohmann::json::array());
  // The split's own mean (replay/dist/wait_split.h); older reports: from the steps.
  merged["iteration_ms_mean"] = d0.value("step_ms_mean", meanOf(merged["step_ms"]));
  merged["straggler"] = d0.value("straggler", -1);
  if (merged.contains("original_job_step_ms")) {
    // The captured job's step, the same statistic (capture.py --nproc).
    const double original = merged.at("original_job_step_ms").get<double>();
    merged["original_iteration_ms"] = original;
    merged["ratio"] = original > 0 ? merged["iteration_ms_median"].get<double>() / original : 0.0;
  } else {
    merged.erase("original_iteration_ms");
    merged.erase("ratio");
  }
  merged["ranks"] = nlohmann::json::array();
  for (const nlohmann::json& r : parsed) merged["ranks"].push_back(rankEntry(r));
  return merged;
}

void printRankTable(const nlohmann::json& m, std::FILE* out) {
  const auto& steps = m.at("step_ms");
  fmt::print(out,
             "distributed replay: {} ranks over {} (launched by {}); step {:.3f} ms (median over "
             "{} iterations of the slowest rank's time; mean {:.3f})\n",
             m.value("world_size", 0), m.value("backend", ""), m.value("launcher", ""),
             m.value("iteration_ms_median", 0.0), steps.size(), m.value("iteration_ms_mean", 0.0));
  fmt::print(out, "{:>5} {:<16} {:<7} {:>10} {:>9} {:>9} {:>7} {:>6} {:>9} {:>8} {:>7} {:>6}\n",
             "rank", "host", "device", "iter ms", "comm ms", "wait ms", "wait %", "colls",
             "coverage", "replayed", "skipped", "failed");
  for (const auto& r : m.at("ranks")) {
    const double iter = r.value("iteration_ms_median", 0.0);
    const double wait = r.value("wait_ms", 0.0);
    fmt::print(out,
               "{:>5} {:<16} {:<7} {:>10.3f} {:>9.3f} {:>9.3f} {:>6.1f}% {:>6} {:>8.2f}% {:>8} "
               "{:>7} {:>6}",
               r.value("rank", 0), r.value("host", "").substr(0, 16), r.value("device", ""), iter,
               r.value("comm_ms", 0.0), wait, iter > 0 ? 100.0 * wait / iter : 0.0,
               r.value("comm_ops", 0), 100.0 * r.value("coverage", 0.0),
               r.value("replayed_ops", 0), r.value("skipped", 0), r.value("failed", 0));
    if (r.contains("ratio")) fmt::print(out, "  replay/original {:.3f}", r.value("ratio", 0.0));
    if (r.contains("host_time") && r["host_time"].value("mode", "replayed") != "replayed") {
      const auto& h = r["host_time"];
      fmt::print(out, "  host time {} +{:.3f} ms", h.value("mode", ""), h.value("wait_ms", 0.0));
    }
    fmt::print(out, "\n");
  }
  if (m.contains("host_time")) {
    fmt::print(out, "host time: {} (each rank its own)\n",
               m["host_time"].value("mode", "replayed"));
  }
  if (m.contains("ratio")) {
    fmt::print(out, "original step: {:.3f} ms (the capture's slowest rank per step, median); "
               "replay/original = {:.3f}\n",
               m.value("original_iteration_ms", 0.0), m.value("ratio", 0.0));
  }
  const int straggler = m.value("straggler", -1);
  if (straggler >= 0) {
    fmt::print(out, "straggler: rank {} (the slowest rank in the most measured iterations)\n",
               straggler);
  }
  for (const auto& r : m.at("ranks")) {
    for (const auto& note : r.at("backend_notes")) {
      fmt::print(out, "rank {}: {}\n", r.value("rank", 0), note.get<std::string>());
    }
  }
}

}  // namespace tracetwin::cli
