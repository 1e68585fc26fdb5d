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

// Racing the close plans (`sweep --measure --contender-rounds N`): the plans
// whose measured step is within `within` (sweep's default 0.15: 15%) of the
// fastest, the fastest among them, in index order. After the first rounds these are the
// plans whose order the host's drift can still turn, so the measurement's
// remaining rounds are spent on them rather than on plans already far behind.
// Throws UsageError on an empty series or a negative `within`.
std::vector<size_t> closeContenders(const std::vector<double>& measured, double within);

// Two plans' steps round by round. `--measure` runs every plan once per round
// (A B C, B C A, ...), so one round's steps share the host's phase and are
// compared as pairs: whether one plan is faster than another beyond the
// host's drift is a question of how many rounds agree, which the rounds'
// medians alone cannot answer.
struct PairedRounds {
  size_t faster = 0;  // rounds in which the first plan's step was the lower
  size_t slower = 0;
  size_t ties = 0;
  // One-sided exact sign test (ties dropped): the chance of at least `faster`
  // of `faster + slower` rounds going the first plan's way were the two plans
  // equally fast. 1 when no round decides. Below 0.05 takes at least 5
  // deciding rounds (5 of 5: 0.031; 4 of 4: 0.0625; 7 of 8: 0.035).
  double sign_test_p = 1;
};
// Throws UsageError when the series differ in length (compareCommonRounds
// takes the rounds both plans ran: the first min(size) of each).
PairedRounds compareRounds(const std::vector<double>& first, const std::vector<double>& second);
PairedRounds compareCommonRounds(const std::vector<double>& first,
                                 const std::vector<double>& second);

// The round whose step is nearest the rounds' median (the plan's measured
// step), the earliest among equals: the round `--measure` keeps as the plan's
// `replay.json`. Throws UsageError on an empty series.
size_t roundNearestMedian(const std::vector<double>& rounds);

}  // namespace tracetwin::sweep
