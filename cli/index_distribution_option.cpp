#include "cli/index_distribution_option.h"

#include <fmt/core.h>

#include "predictors/specs/index_distribution_spec.h"

namespace tracetwin::cli {

void addIndexDistributionOption(CLI::App& sub, std::string& path) {
  sub.add_option("--index-distribution", path,
                 "YAML side file of embedding lookups' index distributions (by op id or weight "
                 "shape: uniform, or Zipf with exponent s; docs/calibration.md, \"Index "
                 "distributions\"); with --nproc, '{rank}' in it is each rank's number");
}

IndexDistributionUse indexDistributionsFor(const std::string& path, const core::Graph& graph) {
  IndexDistributionUse use;
  if (path.empty()) return use;
  const predictors::IndexDistributionSpec spec = predictors::loadIndexDistributions(path);
  const predictors::ResolvedIndexDistributions resolved =
      predictors::resolveIndexDistributions(spec, graph);
  use.index_zipf = resolved.lookups;
  use.index_reuse = predictors::indexReuseOf(resolved);
  for (const auto& [id, law] : resolved.lookups) use.zipf_lookups += law.zipf > 0 ? 1 : 0;
  for (const std::string& u : resolved.unmatched) {
    use.notes.push_back(fmt::format("index distribution {} matched no lookup of this trace", u));
  }
  return use;
}

}  // namespace tracetwin::cli
