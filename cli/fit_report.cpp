#include "cli/fit_report.h"

#include <fmt/core.h>

namespace tracetwin::cli {

void printFitReport(const predictors::FitReport& report) {
  fmt::print("\nhold-out accuracy per op family (GMAE = geometric mean |pred - meas| / meas):\n");
  fmt::print("{:<14} {:<16} {:>7} {:>8} {:>13} {:>13} {:>12}\n", "family", "model", "train",
             "holdout", "holdout GMAE", "analytic GMAE", "fixed us/op");
  for (const auto& f : report.families) {
    fmt::print("{:<14} {:<16} {:>7} {:>8} {:>12.1f}% {:>12.1f}% {:>12.2f}\n", f.family,
               f.model_kind, f.n_train, f.n_holdout, 100.0 * f.holdout_gmae,
               100.0 * f.analytic_gmae, f.intercept_us);
  }
  // Where each family's hold-out error comes from: its worst ops.
  for (const auto& f : report.families) {
    if (f.worst_holdout_ops.size() < 2) continue;  // one op: the row above says it all
    fmt::print("  {} hold-out, worst ops:", f.family);
    for (const auto& s : f.worst_holdout_ops)
      fmt::print(" {} {:.1f}% ({})", s.op, 100.0 * s.gmae, s.samples);
    fmt::print("\n");
  }
  // Spaced units' rows (ops long after their inputs' last touch), apart.
  for (const auto& f : report.families) {
    if (f.n_spaced_holdout == 0) continue;
    fmt::print("  {} hold-out at reuse distances (spaced units): {:.1f}% over {}\n", f.family,
               100.0 * f.spaced_holdout_gmae, f.n_spaced_holdout);
  }
  for (const std::string& n : report.notes) fmt::print("  note: {}\n", n);
}

}  // namespace tracetwin::cli
