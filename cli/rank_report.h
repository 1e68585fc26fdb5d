// A distributed replay's one report (written by rank 0): rank 0's
// single-rank report, so its readers keep working, with the job's figures
// on top (world_size, backend, the step as iteration_ms_median) and one
// entry per rank in `ranks`. Torch-free.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tracetwin::cli {

// `reports`: each rank's replay JSON (replay/result_json.h, with
// "distributed"), in rank order. Throws InputError naming the rank whose
// report is not such a JSON.
nlohmann::json mergeRankReports(const std::vector<std::string>& reports);

// The per-rank table and the straggler, from a merged report.
void printRankTable(const nlohmann::json& merged, std::FILE* out);

}  // namespace tracetwin::cli
