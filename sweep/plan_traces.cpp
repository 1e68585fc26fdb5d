#include "sweep/plan_traces.h"

#include <fmt/core.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <system_error>

#include "core/errors.h"
#include "core/text_file.h"
#include "sweep/index_side_file.h"
#include "sweep/step_trace.h"

namespace tracetwin::sweep {
namespace {

namespace fs = std::filesystem;

}  // namespace

std::string planDirectoryName(const std::string& plan_name) {
  std::string s = plan_name;
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
  }
  return s;
}

void writePlanTraces(const SweepSpec& spec, const std::vector<const Plan*>& plans,
                     const std::string& dir) {
  std::map<std::string, const Plan*> by_directory;
  for (const Plan* plan : plans) {
    const auto [it, fresh] = by_directory.emplace(planDirectoryName(plan->name), plan);
    if (!fresh) {
      throw InputError(fmt::format(
          "{}: plans '{}' and '{}' would write to one directory, {}/{} (names keep letters, "
          "digits, '_' and '-'): rename one",
          spec.source, it->second->name, plan->name, dir, it->first));
    }
  }
  for (const auto& [name, plan] : by_directory) {
    const fs::path pdir = fs::path(dir) / name;
    std::error_code ec;
    fs::create_directories(pdir, ec);
    if (ec)
      throw InputError(
          fmt::format("{}: cannot make the directory: {}", pdir.string(), ec.message()));
    const std::vector<Placement> place = placementsOf(*plan);
    for (int r = 0; r < spec.world_size; ++r) {
      const RankStep step = buildRankStep(spec, place, r);
      core::writeTextFile((pdir / fmt::format("rank{}.et.json", r)).string(), step.trace.dump());
      // The Zipf tables' indices, for replay --index-distribution.
      core::writeTextFile((pdir / indexSideFileName(r)).string(),
                          indexDistributionYaml(spec, place, step));
    }
  }
}

}  // namespace tracetwin::sweep
