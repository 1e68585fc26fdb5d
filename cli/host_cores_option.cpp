#include "cli/host_cores_option.h"

#include <fmt/core.h>

#include <cmath>

namespace tracetwin::cli {
namespace {
constexpr double kMaxCores = 1e6;  // far above any host's; 1e29 was taken as a count
}  // namespace

void addHostCoresOption(CLI::App& sub, double& host_cores, const std::string& help) {
  sub.add_option("--host-cores", host_cores, help)
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            double v = 0;
            if (!CLI::detail::lexical_cast(text, v) || !(v == -1 || (v >= 1 && v <= kMaxCores))) {
              return fmt::format(
                  "{}: expected a number of cores from 1 to {:.0f}, or -1 for a host per rank",
                  text, kMaxCores);
            }
            return {};
          },
          "CORES 1..1000000 or -1"));
}

}  // namespace tracetwin::cli
