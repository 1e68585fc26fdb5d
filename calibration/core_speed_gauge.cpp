#include "calibration/core_speed_gauge.h"

#include <fmt/core.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>

#include "core/errors.h"

namespace tracetwin::calibration {

CoreSpeedGauge::CoreSpeedGauge(std::vector<int> cpus, HostSpeedGauge::Reading reading, PinTo pin,
                               HostSpeedGauge::Sleep sleep, int warmup_rounds)
    : cpus_(std::move(cpus)),
      pin_(std::move(pin)),
      sleep_(sleep
                 ? std::move(sleep)
                 : [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }),
      gauge_(std::move(reading), sleep_, /*warmup_readings=*/0) {
  if (cpus_.empty()) throw UsageError("the core speed gauge needs at least one CPU");
  for (int i = 0; i < warmup_rounds; ++i) readAll();
}

CoreSpeedGauge CoreSpeedGauge::onThisHost(int warmup_rounds, HostSpeedGauge::Sleep sleep) {
  auto original = std::make_shared<cpu_set_t>();
  CPU_ZERO(original.get());
  if (::sched_getaffinity(0, sizeof(cpu_set_t), original.get()) != 0) {
    throw RuntimeFailure(
        fmt::format("cannot read this process's CPU affinity: {}", std::strerror(errno)));
  }
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, original.get())) cpus.push_back(c);
  }
  PinTo pin = [original](int cpu) {
    cpu_set_t set;
    if (cpu < 0) {
      set = *original;
    } else {
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
    }
    if (::sched_setaffinity(0, sizeof(cpu_set_t), &set) != 0) {
      throw RuntimeFailure(
          fmt::format("cannot move this thread onto CPU {}: {}", cpu, std::strerror(errno)));
    }
    // sched_setaffinity moves the thread before it returns; yielding once
    // lets the reading start on the new CPU's own time slice.
    std::this_thread::yield();
  };
  return CoreSpeedGauge(std::move(cpus), referenceWorkUs, std::move(pin), std::move(sleep),
                        warmup_rounds);
}

std::vector<double> CoreSpeedGauge::readAll() {
  std::vector<double> slowdowns;
  slowdowns.reserve(cpus_.size());
  // Back on the original CPUs even when a pin throws half way.
  struct Restore {
    PinTo& pin;
    ~Restore() {
      try {
        pin(-1);
      } catch (...) {  // nothing better to do in a destructor
      }
    }
  } restore{pin_};
  for (int cpu : cpus_) {
    pin_(cpu);
    slowdowns.push_back(gauge_.read());
  }
  return slowdowns;
}

std::vector<double> CoreSpeedGauge::waitForSteady(double tolerance, double max_wait_s,
                                                  double poll_s) {
  std::vector<double> slowdowns = readAll();
  double slept = 0;
  while (slowestCore(slowdowns) > tolerance && poll_s > 0 && slept + poll_s <= max_wait_s + 1e-9) {
    sleep_(poll_s);
    slept += poll_s;
    slowdowns = readAll();
  }
  waited_s_ += slept;
  return slowdowns;
}

double slowestCore(const std::vector<double>& slowdowns) {
  return slowdowns.empty() ? 1.0 : *std::max_element(slowdowns.begin(), slowdowns.end());
}

std::string describeCoreSlowdowns(const std::vector<int>& cpus,
                                  const std::vector<double>& slowdowns) {
  std::string out;
  for (size_t i = 0; i < cpus.size() && i < slowdowns.size(); ++i) {
    if (!out.empty()) out += ", ";
    out += fmt::format("cpu{} {:.2f}x", cpus[i], slowdowns[i]);
  }
  return out;
}

}  // namespace tracetwin::calibration
