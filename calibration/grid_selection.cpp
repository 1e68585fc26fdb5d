#include "calibration/grid_selection.h"

#include <fmt/core.h>

#include <algorithm>
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

GridOptions gridFor(const std::string& device) {
  GridOptions g;
  g.device = device == "cuda" ? "cuda:0" : device;
  if (device != "cpu") {
    g.dtypes = {core::DType::kFloat32, core::DType::kFloat16, core::DType::kBFloat16};
    g.accelerator = true;
  }
  return g;
}

std::vector<MicrobenchCase> gridCases(const MicrobenchFamily& fam, const std::string& device,
                                      const std::string& case_filter) {
  std::vector<MicrobenchCase> cases = fam.cases(gridFor(device));
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

void checkCaseFilter(const std::vector<const MicrobenchFamily*>& families,
                     const std::string& device, const std::string& case_filter) {
  if (case_filter.empty()) return;
  size_t matching = 0;
  for (const MicrobenchFamily* f : families) matching += gridCases(*f, device, case_filter).size();
  if (matching == 0) {
    throw UsageError(fmt::format(
        "--cases '{}' matches no grid point of the families calibrated (labels such as \"relu "
        "numel=1000 float32\" are the dataset's `case` fields)",
        case_filter));
  }
}

}  // namespace tracetwin::calibration
