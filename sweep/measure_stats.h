// Judging predictions against measurements (docs/sweeps.md, "Measuring"):
// the rank correlation of predicted and measured steps, and whether the
// predicted best plan is the measured best (or within a tolerance of it).
#pragma once

#include <cstddef>
#include <vector>

namespace tracetwin::sweep {

// Kendall's tau-b of two equally long series (ties in either count for
// neither pair); 0 for fewer than two values or all ties.
double kendallTau(const std::vector<double>& a, const std::vector<double>& b);

struct PickBest {
  size_t predicted_best = 0;  // index of the lowest prediction
  size_t measured_best = 0;   // index of the lowest measurement
  double gap = 0;             // measured[predicted_best] / measured[measured_best] - 1
  bool success = false;       // gap <= tolerance
};
// Throws UsageError when the series are empty or of different lengths.
PickBest pickBest(const std::vector<double>& predicted, const std::vector<double>& measured,
                  double tolerance = 0.03);

}  // namespace tracetwin::sweep
