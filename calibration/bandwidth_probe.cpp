#include "calibration/bandwidth_probe.h"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <system_error>
#include <thread>

#include "core/errors.h"
#include "core/statistics.h"

namespace tracetwin::calibration {
namespace {

using Clock = std::chrono::steady_clock;

// Two buffers of one stream, touched once so that no copy pays page faults.
struct StreamBuffers {
  std::vector<char> from, to;
  explicit StreamBuffers(int64_t bytes) : from(size_t(bytes), 1), to(size_t(bytes), 0) {}
  double copySeconds() {
    const auto t0 = Clock::now();
    std::memcpy(to.data(), from.data(), from.size());
    return std::chrono::duration<double>(Clock::now() - t0).count();
  }
};

// Every stream copies once, all released together; the median stream's time.
double copyTogether(std::vector<StreamBuffers>& streams) {
  std::vector<double> seconds(streams.size(), 0.0);
  // Each thread spins until all have started, so the copies overlap whole.
  std::atomic<size_t> started{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  try {
    for (size_t i = 0; i < streams.size(); ++i) {
      threads.emplace_back([&, i] {
        started.fetch_add(1);
        while (!go.load()) std::this_thread::yield();
        seconds[i] = streams[i].copySeconds();
      });
    }
  } catch (const std::system_error& e) {
    go = true;
    for (std::thread& t : threads) t.join();
    throw RuntimeFailure(
        fmt::format("memory contention probe: cannot start a thread: {}", e.what()));
  }
  while (started.load() < threads.size()) std::this_thread::yield();
  go = true;
  for (std::thread& t : threads) t.join();
  return core::median(seconds);
}

}  // namespace

double contentionFromRatios(std::vector<double> ratios) {
  if (ratios.empty()) return 0.0;
  return std::max(0.0, core::median(std::move(ratios)) - 1.0);
}

BandwidthProbe measureMemoryContention(const BandwidthProbeOptions& options) {
  std::vector<StreamBuffers> streams;
  try {
    for (int i = 0; i < std::max(2, options.streams); ++i)
      streams.emplace_back(options.buffer_bytes);
  } catch (const std::bad_alloc&) {
    throw RuntimeFailure(
        fmt::format("memory contention probe: cannot allocate {} streams of 2 x {} MiB",
                    options.streams, options.buffer_bytes >> 20));
  }
  BandwidthProbe p;
  std::vector<double> alone, together;
  streams[0].copySeconds();  // warm
  for (int r = 0; r < options.rounds; ++r) {
    const double one = streams[0].copySeconds();
    const double all = copyTogether(streams);
    alone.push_back(one);
    together.push_back(all);
    p.round_ratios.push_back(all / one);
  }
  const double bytes = static_cast<double>(options.buffer_bytes);
  p.alone_gbps = bytes / core::median(alone) / 1e9;
  p.together_gbps = bytes / core::median(together) / 1e9;
  p.contention = contentionFromRatios(p.round_ratios);
  return p;
}

}  // namespace tracetwin::calibration
