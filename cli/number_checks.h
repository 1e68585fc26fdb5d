// Checks of numeric options that answer in words a user reads. CLI11's own
// answered `--iters abc` with "Value abc not in range 0.000000 to 17976931...
// (309 digits)", and `--iters 1e9` with "Could not convert".
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <limits>

namespace tracetwin::cli {

// A whole number from `lo` to `hi`, in decimal digits: "1e9", "2.5" and
// "abc" are refused, naming the range.
CLI::Validator wholeNumber(int64_t lo, int64_t hi);

// A whole number from `lo` to the largest a T holds.
template <typename T>
CLI::Validator wholeNumberFor(int64_t lo) {
  const uint64_t top = std::min<uint64_t>(std::numeric_limits<T>::max(),
                                          uint64_t(std::numeric_limits<int64_t>::max()));
  return wholeNumber(lo, static_cast<int64_t>(top));
}

// A finite number from `lo` to `hi` ("0.5", "1e-3").
CLI::Validator numberIn(double lo, double hi);

// --host-scale's ceiling: a host a thousand times slower is past any what-if,
// and 1e300 made every time infinite, reported as a broken model set.
inline constexpr double kMaxHostScale = 1e3;

// A finite number above `lo` (seconds, scales: above 0), and at most `hi`.
CLI::Validator numberAbove(double lo, double hi = std::numeric_limits<double>::infinity());

}  // namespace tracetwin::cli
