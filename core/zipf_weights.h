// Sums of a Zipf law's row weights, (first_row + i)^-exponent for rows
// i = 1, 2, ..., without a loop over every row and without underflow:
// shared by the sweep's row-wise shard split (how many lookups fall in a
// shard's rows), the predictor's index-reuse histograms and the replay's
// inverse-CDF draw.
//
// Each weight is taken relative to row 1's, ((first_row + i) /
// (first_row + 1))^-exponent, so row 1 weighs exactly 1: the absolute
// weights of a shard deep in a steep table (first_row = 10^6, exponent 400)
// are all below the smallest double, and their normalized shares were 0/0.
// A sum of n rows is exact up to kExactZipfTerms terms and closed-form past
// them (Euler-Maclaurin: the integral, the end points and the first two
// derivative corrections; within 1e-10 of row-by-row sums of 300,000 rows
// at exponents 0-7, tests/core/zipf_weights_test.cpp), so a table of
// 10^11 rows costs what one of 4,096 does: a sweep that split one row-wise
// held for minutes summing it row by row.
#pragma once

#include <cstdint>

namespace tracetwin::core {

class ZipfWeights {
 public:
  // Throws UsageError unless exponent is finite and >= 0 and first_row >= 0.
  ZipfWeights(double exponent, int64_t first_row = 0);

  // Row i's weight relative to row 1's (i >= 1).
  double term(double i) const;
  // The sum of term(i) over i = 1..n (0 for n <= 0).
  double sum(int64_t n) const;
  // The sum over i = a..b (0 when b < a).
  double sum(int64_t a, int64_t b) const;
  // The integral of term(x) over [lo, hi], lo >= 0.5: the weight of the
  // rows between, as the midpoint rule counts them.
  double integral(double lo, double hi) const;

  double exponent() const { return exponent_; }

 private:
  double tailSum(int64_t a, int64_t b) const;  // Euler-Maclaurin, a > kExactZipfTerms

  double exponent_;
  double first_;  // first_row as a double: the row-1 offset of every term
};

// Terms summed one by one before the closed form takes over.
inline constexpr int64_t kExactZipfTerms = 4096;

}  // namespace tracetwin::core
