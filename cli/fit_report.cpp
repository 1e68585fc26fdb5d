#include "cli/fit_report.h"

#include <fmt/core.h>

#include <string>

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

void printCommFit(const predictors::CommFit& fit) {
  fmt::print("\n{:<16} {:>6} {:>12} {:>12} {:>11} {:>11} {:>11} {:>8}\n", "collective", "ranks",
             "bytes", "time us", "algbw GB/s", "busbw GB/s", "model us", "error");
  for (const predictors::CommPoint& p : fit.points) {
    fmt::print("{:<16} {:>6} {:>12.0f} {:>12.1f} {:>11.3f} {:>11.3f} {:>11.1f} {:>7.1f}%\n",
               p.collective, p.group_size, p.bytes, p.seconds * 1e6, p.algbw_gbps, p.busbw_gbps,
               p.predicted_s * 1e6, p.predicted_s > 0 ? 100 * (p.predicted_s / p.seconds - 1) : 0);
  }
  fmt::print("\nalpha-beta per collective (time = latency steps x alpha + byte terms x bytes x "
             "beta; 1/beta as GB/s):\n");
  for (const predictors::CommCollectiveFit& c : fit.collectives) {
    fmt::print("  {:<16} {} points, mean |error| {:.1f}%:", c.collective, c.points,
               100 * c.mean_abs_error);
    for (const auto& g : c.regimes) {
      const std::string range = g.up_to_bytes >= predictors::AlphaBetaModel::kAnySize
                                    ? "any size"
                                    : fmt::format("<= {:.0f} B", g.up_to_bytes);
      const std::string bw = g.params.beta_s_per_byte > 0
                                 ? fmt::format("{:.3f} GB/s", 1e-9 / g.params.beta_s_per_byte)
                                 : std::string("none (latency only)");
      fmt::print("  [{}] alpha {:.2f} us, 1/beta {}", range, g.params.alpha_s * 1e6, bw);
    }
    fmt::print("\n");
  }
  for (const std::string& n : fit.notes) fmt::print("note: {}\n", n);
}

}  // namespace tracetwin::cli
