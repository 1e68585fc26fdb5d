#include "core/zipf_weights.h"

#include <algorithm>
#include <cmath>

#include "core/errors.h"

namespace tracetwin::core {

ZipfWeights::ZipfWeights(double exponent, int64_t first_row)
    : exponent_(exponent), first_(double(first_row)) {
  if (!(exponent >= 0) || !std::isfinite(exponent)) {
    throw UsageError("a Zipf exponent must be a finite number >= 0");
  }
  if (first_row < 0) throw UsageError("a Zipf law's first row must be >= 0");
}

double ZipfWeights::term(double i) const {
  // log1p keeps the ratio's logarithm exact when first_ dwarfs i.
  return std::exp(-exponent_ * std::log1p((i - 1) / (first_ + 1)));
}

double ZipfWeights::integral(double lo, double hi) const {
  if (!(hi > lo)) return 0;
  // Substituting y = (first + x) / (first + 1): (first + 1) * the integral
  // of y^-s over [y_lo, y_hi], in the form that stays exact as s -> 1.
  const double y_lo = 1 + (lo - 1) / (first_ + 1);
  const double log_ratio = std::log1p((hi - lo) / (first_ + lo));
  const double t = 1.0 - exponent_;
  const double scale = first_ + 1;
  if (std::abs(t) < 1e-12) return scale * log_ratio;  // y^-1: the log
  const double head = std::exp(t * std::log(y_lo));
  if (head == 0) return 0;
  return scale * head * std::expm1(t * log_ratio) / t;
}

double ZipfWeights::sum(int64_t n) const { return sum(1, n); }

double ZipfWeights::sum(int64_t a, int64_t b) const {
  a = std::max<int64_t>(a, 1);
  if (b < a) return 0;
  double total = 0;
  const int64_t exact_end = std::min(b, kExactZipfTerms);
  for (int64_t i = a; i <= exact_end; ++i) total += term(double(i));
  if (b > kExactZipfTerms) total += tailSum(std::max(a, kExactZipfTerms + 1), b);
  return total;
}

double ZipfWeights::tailSum(int64_t a, int64_t b) const {
  const double fa = term(double(a)), fb = term(double(b));
  if (fa == 0) return 0;  // decreasing: every later term underflows too
  // f'(x) = -s f(x) / (first + x); f'''(x) = -s (s+1) (s+2) f(x) / (first + x)^3.
  // Past row 4,096 a term below 2^-1000 of row 1's is negligible, and where
  // s / (first + x) is large the terms underflowed above; the corrections
  // are finite wherever they are used.
  const double s = exponent_;
  const auto d1 = [&](double x, double f) { return f == 0 ? 0 : -s * f / (first_ + x); };
  const auto d3 = [&](double x, double f) {
    if (f == 0) return 0.0;
    const double r = 1 / (first_ + x);
    return -s * r * (s + 1) * r * (s + 2) * r * f;
  };
  const double A = double(a), B = double(b);
  double total = integral(A, B) + (fa + fb) / 2;
  total += (d1(B, fb) - d1(A, fa)) / 12;
  total -= (d3(B, fb) - d3(A, fa)) / 720;
  return total;
}

}  // namespace tracetwin::core
