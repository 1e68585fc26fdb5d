// Robust summary statistics for overhead samples (Lin et al. use medians;
// Tukey's 1.5 x IQR fences drop the stragglers that page faults, GC pauses
// and iteration boundaries put into CPU gaps).
#pragma once

#include <cstdint>
#include <vector>

namespace tracetwin::core::kineto {

struct RobustStat {
  double median = 0;
  double iqr = 0;        // q3 - q1 of the samples kept
  int64_t count = 0;     // samples kept
  int64_t outliers = 0;  // samples outside [q1 - 1.5 IQR, q3 + 1.5 IQR] of all samples
  // Of all samples, outliers included: what a sum of many such gaps averages
  // to (a step is such a sum; its rare long gaps are Python's work between
  // ops, which the median leaves out). -1: not recorded (older files).
  double mean = -1;
};

// Quantile by linear interpolation between closest ranks (numpy's default);
// `sorted` must be sorted ascending and non-empty.
double quantileSorted(const std::vector<double>& sorted, double q);

// Median and IQR after removing Tukey outliers, and the mean of all samples.
// Empty input gives count 0.
RobustStat robustStat(std::vector<double> samples);

}  // namespace tracetwin::core::kineto
