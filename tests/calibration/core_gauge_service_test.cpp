// `tracetwin host --serve-core-gauge`'s protocol on a gauge whose cores are
// fakes: one JSON line per request, the wait's sleeping reported, unknown
// requests refused by line.
#include "calibration/core_gauge_service.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/errors.h"

namespace tracetwin::calibration {
namespace {

// Two cores whose gauge work takes `us[cpu]`; a sleep lets `after_sleeps`
// sleeps go by before core 1 speeds up to core 0's time.
struct TwoCores {
  std::map<int, double> us{{0, 50.0}, {1, 50.0}};
  int on = -1;
  int sleeps = 0;
  int after_sleeps = 0;

  CoreSpeedGauge gauge() {
    return CoreSpeedGauge(
        {0, 1}, [this] { return us.at(on); }, [this](int cpu) { on = cpu; },
        [this](double) {
          if (++sleeps == after_sleeps) us[1] = us[0];
        },
        /*warmup_rounds=*/1);
  }
};

std::vector<nlohmann::json> serve(CoreSpeedGauge& gauge, const std::string& input) {
  std::istringstream in(input);
  std::ostringstream out;
  serveCoreGauge(gauge, in, out);
  std::vector<nlohmann::json> replies;
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) replies.push_back(nlohmann::json::parse(line));
  return replies;
}

TEST(CoreGaugeService, AnswersEveryRequestWithOneLine) {
  TwoCores host;
  CoreSpeedGauge gauge = host.gauge();
  host.us[1] = 100;  // a tenant on core 1
  host.after_sleeps = 4;
  const std::vector<nlohmann::json> replies = serve(gauge, "read\n\n  \nwait 1.25 10\nread\r\n");
  ASSERT_EQ(replies.size(), 3u);
  EXPECT_EQ(replies[0].at("cpus"), nlohmann::json({0, 1}));
  EXPECT_DOUBLE_EQ(replies[0].at("slowest").get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(replies[0].at("waited_s").get<double>(), 0.0);
  // The wait polls until the tenant leaves: 4 sleeps of the gauge's 0.05 s.
  EXPECT_DOUBLE_EQ(replies[1].at("slowest").get<double>(), 1.0);
  EXPECT_NEAR(replies[1].at("waited_s").get<double>(), 0.2, 1e-12);
  EXPECT_EQ(replies[1].at("slowdowns"), nlohmann::json({1.0, 1.0}));
  EXPECT_DOUBLE_EQ(replies[2].at("waited_s").get<double>(), 0.0);
}

TEST(CoreGaugeService, AWaitGivesUpAfterItsLongestSleep) {
  TwoCores host;
  CoreSpeedGauge gauge = host.gauge();
  host.us[1] = 80;  // and it stays
  const std::vector<nlohmann::json> replies = serve(gauge, "wait 1.25 0.1\n");
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_DOUBLE_EQ(replies[0].at("slowest").get<double>(), 1.6);
  EXPECT_NEAR(replies[0].at("waited_s").get<double>(), 0.1, 1e-12);
}

TEST(CoreGaugeService, RefusesWhatItDoesNotKnowByLine) {
  for (const std::string bad : {"wait", "wait 1.25", "wait 0.9 10", "wait 1.25 -1",
                                "wait 1.25 10 x", "read now", "go", "wait nan 1"}) {
    TwoCores host;
    CoreSpeedGauge gauge = host.gauge();
    std::istringstream in("read\n" + bad + "\nread\n");
    std::ostringstream out;
    try {
      serveCoreGauge(gauge, in, out);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("'" + bad + "'"), std::string::npos) << e.what();
    }
    // The good request before it was answered, nothing after it.
    const std::string answered = out.str();
    EXPECT_EQ(std::count(answered.begin(), answered.end(), '\n'), 1) << bad;
  }
}

}  // namespace
}  // namespace tracetwin::calibration
