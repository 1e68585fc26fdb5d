// `--index-distribution FILE` of replay and compare: the embedding lookups'
// index distributions of a side file (predictors/specs/index_distribution_spec.h)
// resolved against the trace, for the replay's value generators and the
// prediction's index-reuse histograms.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/graph.h"
#include "core/index_law.h"

namespace tracetwin::cli {

void addIndexDistributionOption(CLI::App& sub, std::string& path);

struct IndexDistributionUse {
  std::unordered_map<core::NodeId, core::IndexLaw> index_zipf;  // ReplayOptions::index_zipf
  std::unordered_map<core::NodeId, std::vector<double>> index_reuse;  // PredictOptions
  std::vector<std::string> notes;  // rules that matched no lookup of this trace
  size_t zipf_lookups = 0;
};

// Empty `path`: nothing. Throws InputError on a bad file or a node rule that
// names no lookup of `graph`.
IndexDistributionUse indexDistributionsFor(const std::string& path, const core::Graph& graph);

}  // namespace tracetwin::cli
