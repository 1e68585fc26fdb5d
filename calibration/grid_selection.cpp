#include "calibration/grid_selection.h"

#include <fmt/core.h>

#include <algorithm>
#include <random>
#include <regex>

#include "core/errors.h"

namespace tracetwin::calibration {

std::vector<const MicrobenchFamily*> resolveFamilies(const std::vector<std::string>& names) {
  std::vector<const MicrobenchFamily*> out;
  if (names.empty()) {
    for (const MicrobenchFamily& f : microbenchRegistry()) out.push_back(&f);
    return out;
  }
  for (const std::string& n : names) out.push_back(&microbenchFamily(n));  // UsageError if unknown
  return out;
}

GridOptions gridFor(const std::string& device, const std::vector<core::DType>& dtypes) {
  GridOptions g;
  g.device = device == "cuda" ? "cuda:0" : device;
  if (device != "cpu") {
    g.dtypes = {core::DType::kFloat32, core::DType::kFloat16, core::DType::kBFloat16};
    g.accelerator = true;
  }
  if (!dtypes.empty()) g.dtypes = dtypes;
  return g;
}

std::vector<core::DType> parseGridDtypes(const std::vector<std::string>& names) {
  std::vector<core::DType> out;
  constexpr core::DType kSwept[] = {core::DType::kFloat32, core::DType::kFloat64,
                                    core::DType::kFloat16, core::DType::kBFloat16};
  for (const std::string& name : names) {
    const auto* it = std::find_if(std::begin(kSwept), std::end(kSwept),
                                  [&](core::DType d) { return name == core::dtypeName(d); });
    if (it == std::end(kSwept)) {
      throw UsageError(fmt::format(
          "--dtypes: '{}' is not a floating dtype the grids sweep (float32, float64, float16, "
          "bfloat16)",
          name));
    }
    if (std::find(out.begin(), out.end(), *it) == out.end()) out.push_back(*it);
  }
  return out;
}

std::vector<MicrobenchCase> gridCases(const MicrobenchFamily& fam, const GridOptions& grid,
                                      const std::string& case_filter) {
  std::vector<MicrobenchCase> cases = fam.cases(grid);
  if (case_filter.empty()) return cases;
  std::regex keep;
  try {
    keep = std::regex(case_filter);
  } catch (const std::regex_error& e) {
    throw UsageError(
        fmt::format("--cases '{}' is not a regular expression: {}", case_filter, e.what()));
  }
  cases.erase(
      std::remove_if(cases.begin(), cases.end(),
                     [&](const MicrobenchCase& c) { return !std::regex_search(c.label, keep); }),
      cases.end());
  return cases;
}

void checkCaseFilter(const std::vector<const MicrobenchFamily*>& families, const GridOptions& grid,
                     const std::string& case_filter) {
  if (case_filter.empty()) return;
  size_t matching = 0;
  for (const MicrobenchFamily* f : families) matching += gridCases(*f, grid, case_filter).size();
  if (matching == 0) {
    throw UsageError(fmt::format(
        "--cases '{}' matches no grid point of the families calibrated (labels such as \"relu "
        "numel=1000 float32\" are the dataset's `case` fields)",
        case_filter));
  }
}

namespace {

// A small budget must still span the sizes: before the random order, visit
// 12 points at cost quantiles 0, 1/16, ..., 11/16 (the costliest quarter
// waits for the random order), so no family's share goes to one huge point.
void frontLoadCostQuantiles(std::vector<MicrobenchCase>& cases) {
  constexpr size_t kFront = 12, kSteps = 16;
  if (cases.size() < 2 * kSteps) return;
  std::vector<size_t> by_cost(cases.size());
  for (size_t i = 0; i < by_cost.size(); ++i) by_cost[i] = i;
  std::stable_sort(by_cost.begin(), by_cost.end(),
                   [&](size_t a, size_t b) { return cases[a].est_us < cases[b].est_us; });
  std::vector<bool> front(cases.size(), false);
  std::vector<MicrobenchCase> ordered;
  ordered.reserve(cases.size());
  for (size_t q = 0; q < kFront; ++q) {
    const size_t i = by_cost[q * cases.size() / kSteps];
    front[i] = true;
    ordered.push_back(cases[i]);
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    if (!front[i]) ordered.push_back(std::move(cases[i]));
  }
  cases = std::move(ordered);
}

}  // namespace

void orderForSweep(std::vector<MicrobenchCase>& cases, uint64_t seed) {
  std::vector<MicrobenchCase> anchors;
  for (const MicrobenchCase& c : cases) {
    if (c.anchor) anchors.push_back(c);
  }
  std::mt19937_64 rng(seed);
  std::shuffle(cases.begin(), cases.end(), rng);
  frontLoadCostQuantiles(cases);
  if (anchors.empty()) return;
  cases.erase(std::remove_if(cases.begin(), cases.end(),
                             [](const MicrobenchCase& c) { return c.anchor; }),
              cases.end());
  cases.insert(cases.begin(), anchors.begin(), anchors.end());
}

}  // namespace tracetwin::calibration
