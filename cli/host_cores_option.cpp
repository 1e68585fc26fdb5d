#include "cli/host_cores_option.h"

#include <fmt/core.h>

#include <cmath>

namespace tracetwin::cli {

void addHostCoresOption(CLI::App& sub, double& host_cores, const std::string& help) {
  sub.add_option("--host-cores", host_cores, help)
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            double v = 0;
            if (!CLI::detail::lexical_cast(text, v) || !(v == -1 || (std::isfinite(v) && v >= 1))) {
              return fmt::format(
                  "{}: expected a number of cores >= 1, or -1 for a "
                  "host per rank",
                  text);
            }
            return {};
          },
          "CORES >= 1 or -1"));
}

}  // namespace tracetwin::cli
