#include "calibration/core_gauge_service.h"

#include <fmt/core.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/errors.h"

namespace tracetwin::calibration {
namespace {

struct Request {
  bool wait = false;
  double tolerance = 0;
  double max_wait_s = 0;
};

// The request on `line` (line number `number`), or an InputError that says
// what was expected.
Request parseRequest(const std::string& line, int64_t number) {
  std::istringstream words(line);
  std::string verb;
  words >> verb;
  Request r;
  bool ok = false;
  if (verb == "read") {
    ok = true;
  } else if (verb == "wait") {
    r.wait = true;
    // A tolerance under 1 would wait for cores faster than the fastest
    // reading, which never come (`sweep --core-tolerance` asks 1.05 or more).
    ok = static_cast<bool>(words >> r.tolerance >> r.max_wait_s) && std::isfinite(r.tolerance) &&
         r.tolerance >= 1 && std::isfinite(r.max_wait_s) && r.max_wait_s >= 0;
  }
  std::string extra;
  if (!ok || words >> extra) {
    throw InputError(fmt::format(
        "core gauge request on line {}: expected 'wait TOLERANCE MAX_WAIT_S' (TOLERANCE >= 1, "
        "MAX_WAIT_S >= 0 seconds) or 'read', got '{}'",
        number, line));
  }
  return r;
}

}  // namespace

void serveCoreGauge(CoreSpeedGauge& gauge, std::istream& requests, std::ostream& replies) {
  std::string line;
  int64_t number = 0;
  while (std::getline(requests, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const Request r = parseRequest(line, number);
    const double waited_before = gauge.waitedSeconds();
    const std::vector<double> slowdowns =
        r.wait ? gauge.waitForSteady(r.tolerance, r.max_wait_s) : gauge.readAll();
    const nlohmann::json reply = {{"cpus", gauge.cpus()},
                                  {"slowdowns", slowdowns},
                                  {"slowest", slowestCore(slowdowns)},
                                  {"waited_s", gauge.waitedSeconds() - waited_before}};
    replies << reply.dump() << std::endl;  // flushed: the driver waits for it
  }
}

}  // namespace tracetwin::calibration
