#include "cli/number_checks.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

namespace tracetwin::cli {
namespace {

// The whole text as a number of type T, or false.
template <typename T>
bool parseAll(const std::string& text, T* value) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  if (begin != end && *begin == '+') ++begin;  // "+3", as strtol reads it
  const auto [next, ec] = std::from_chars(begin, end, *value);
  return ec == std::errc() && next == end && begin != end;
}

}  // namespace

CLI::Validator wholeNumber(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        int64_t v = 0;
        if (!parseAll(text, &v) || v < lo || v > hi)
          return fmt::format("{}: expected a whole number from {} to {}", text, lo, hi);
        return {};
      },
      fmt::format("{}..{}", lo, hi));
}

CLI::Validator numberIn(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        double v = 0;
        if (!parseAll(text, &v) || !std::isfinite(v) || v < lo || v > hi)
          return fmt::format("{}: expected a number from {:g} to {:g}", text, lo, hi);
        return {};
      },
      fmt::format("{:g}..{:g}", lo, hi));
}

CLI::Validator numberAbove(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        double v = 0;
        if (!parseAll(text, &v) || !std::isfinite(v) || !(v > lo) || v > hi) {
          return std::isfinite(hi)
                     ? fmt::format("{}: expected a number above {:g} and at most {:g}", text, lo,
                                   hi)
                     : fmt::format("{}: expected a finite number above {:g}", text, lo);
        }
        return {};
      },
      std::isfinite(hi) ? fmt::format("({:g}, {:g}]", lo, hi) : fmt::format("> {:g}", lo));
}

}  // namespace tracetwin::cli
