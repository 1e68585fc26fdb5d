// A calibration's seams (calibration/calibrator.h) wired to a toy host
// (tests/support/toy_host.h): replays, clock, device probe and host-speed
// gauge all by formula, so a calibration fits the same models on any host.
#pragma once

#include <memory>

#include "calibration/calibrator.h"
#include "tests/support/toy_host.h"

namespace tracetwin::testing {

// What probeDevice would measure on `costs`' host.
inline calibration::ProbeResult toyProbe(const ToyHostCosts& costs) {
  calibration::ProbeResult p;
  predictors::DeviceSpec& spec = p.spec;
  spec.name = "host-cpu";
  spec.kind = predictors::DeviceKind::kCpu;
  spec.peak_flops["float32"] = costs.flops_per_us * 1e6;
  spec.peak_flops["float64"] = costs.flops_per_us * 0.5e6;
  spec.memory_bandwidth = costs.bytes_per_us * 1e6;
  spec.memory_bytes = int64_t{8} << 30;
  spec.compute_units = 2;
  spec.clock_hz = 2.5e9;
  spec.caches = {{"L1", 32 << 10, 0.0},
                 {"L2", 512 << 10, 0.0},
                 {"L3", static_cast<int64_t>(costs.cache_bytes), 0.0}};
  spec.sources.push_back("the toy host of tests/support/toy_host.h");
  p.replay_loop_us = costs.loop_per_op_us;
  return p;
}

inline calibration::CalibrationSeams toySeams(const std::shared_ptr<ToyHost>& host) {
  calibration::CalibrationSeams s;
  s.replay = [host](const core::Graph& g, const replay::ReplayOptions& o) {
    return host->replay(g, o);
  };
  s.clock_s = [host] { return host->nowS(); };
  s.probe_device = [host](const calibration::ProbeOptions&) { return toyProbe(host->costs()); };
  s.gauge_reading = [host] { return host->gaugeReadingUs(); };
  s.gauge_sleep = [host](double secs) { host->sleep(secs); };
  return s;
}

}  // namespace tracetwin::testing
