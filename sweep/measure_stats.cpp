#include "sweep/measure_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/errors.h"
#include "core/statistics.h"

namespace tracetwin::sweep {

double kendallTau(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) throw UsageError("kendallTau: series of different lengths");
  double concordant = 0, discordant = 0, ties_a = 0, ties_b = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t j = i + 1; j < a.size(); ++j) {
      const double da = a[i] - a[j], db = b[i] - b[j];
      if (da == 0 && db == 0) continue;
      if (da == 0) {
        ++ties_a;
      } else if (db == 0) {
        ++ties_b;
      } else if ((da > 0) == (db > 0)) {
        ++concordant;
      } else {
        ++discordant;
      }
    }
  }
  const double n = std::sqrt((concordant + discordant + ties_a) * (concordant + discordant + ties_b));
  return n > 0 ? (concordant - discordant) / n : 0.0;
}

PickBest pickBest(const std::vector<double>& predicted, const std::vector<double>& measured,
                  double tolerance) {
  if (predicted.empty() || predicted.size() != measured.size()) {
    throw UsageError("pickBest: needs as many measured as predicted plans, at least one");
  }
  PickBest p;
  p.predicted_best =
      size_t(std::min_element(predicted.begin(), predicted.end()) - predicted.begin());
  p.measured_best = size_t(std::min_element(measured.begin(), measured.end()) - measured.begin());
  p.gap = measured[p.predicted_best] / measured[p.measured_best] - 1;
  p.success = p.gap <= tolerance;
  return p;
}

std::vector<size_t> closeContenders(const std::vector<double>& measured, double within) {
  if (measured.empty()) throw UsageError("closeContenders: no measured plans");
  if (!(within >= 0)) throw UsageError(fmt::format("closeContenders: within {} < 0", within));
  const double fastest = *std::min_element(measured.begin(), measured.end());
  std::vector<size_t> out;
  for (size_t i = 0; i < measured.size(); ++i) {
    if (measured[i] <= fastest * (1 + within)) out.push_back(i);
  }
  return out;
}

PairedRounds compareRounds(const std::vector<double>& first, const std::vector<double>& second) {
  if (first.size() != second.size()) {
    throw UsageError(
        fmt::format("compareRounds: {} rounds against {}", first.size(), second.size()));
  }
  PairedRounds out;
  for (size_t r = 0; r < first.size(); ++r) {
    if (first[r] < second[r]) {
      ++out.faster;
    } else if (first[r] > second[r]) {
      ++out.slower;
    } else {
      ++out.ties;
    }
  }
  // P(X >= faster) for X ~ Binomial(n, 1/2): the binomial terms summed from
  // the top, C(n, k) built up as a double (n is a number of rounds).
  const size_t n = out.faster + out.slower;
  double tail = 0, choose = 1;  // C(n, k), from k = n down
  for (size_t k = n; k >= out.faster; --k) {
    tail += choose;
    if (k == 0) break;
    choose = choose * double(k) / double(n - k + 1);  // C(n, k - 1)
  }
  out.sign_test_p = std::min(1.0, tail / std::pow(2.0, double(n)));
  return out;
}

PairedRounds compareCommonRounds(const std::vector<double>& first,
                                 const std::vector<double>& second) {
  const size_t n = std::min(first.size(), second.size());
  return compareRounds(std::vector<double>(first.begin(), first.begin() + ptrdiff_t(n)),
                       std::vector<double>(second.begin(), second.begin() + ptrdiff_t(n)));
}

size_t roundNearestMedian(const std::vector<double>& rounds) {
  if (rounds.empty()) throw UsageError("roundNearestMedian: no rounds");
  const double middle = core::median(rounds);
  size_t nearest = 0;
  for (size_t r = 1; r < rounds.size(); ++r)
    if (std::abs(rounds[r] - middle) < std::abs(rounds[nearest] - middle)) nearest = r;
  return nearest;
}

}  // namespace tracetwin::sweep
