#include "predictors/host/host_costs.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/statistics.h"

namespace tracetwin::predictors {
namespace {

constexpr const char* kHostCostSource = "calibration: host time per op call on the device's replay";

// The host time of an op's points with the smaller kernel times: the first
// half (rounded up) in order of device time.
double hostOfSmallerKernels(std::vector<const HostCostSample*> samples) {
  std::sort(samples.begin(), samples.end(), [](const HostCostSample* a, const HostCostSample* b) {
    return a->device_us < b->device_us;
  });
  std::vector<double> host;
  for (size_t i = 0; i < (samples.size() + 1) / 2; ++i) host.push_back(samples[i]->host_us);
  return core::median(host);
}

// The line host = fixed + per_launch * kernels through the median host time
// of each kernel count, weighted by its points; only points whose kernels
// took less than the call (so the host did not wait for them). False when
// too few counts were measured or the line does not rise from above zero.
bool fitPerLaunch(const std::vector<const HostCostSample*>& points, HostCost* c) {
  std::map<int, std::vector<double>> by_count;
  for (const HostCostSample* s : points)
    if (s->kernels > 0 && s->device_us < s->host_us) by_count[s->kernels].push_back(s->host_us);
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  int counts = 0;
  for (const auto& [k, host] : by_count) {
    if (static_cast<int>(host.size()) < kMinPointsPerCount) continue;
    const double w = static_cast<double>(host.size()), y = core::median(host);
    sw += w;
    sx += w * k;
    sy += w * y;
    sxx += w * k * k;
    sxy += w * k * y;
    ++counts;
  }
  if (counts < kMinLaunchCounts) return false;
  const double slope = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
  const double fixed = (sy - slope * sx) / sw;
  if (!(slope > 0) || !(fixed > 0)) return false;
  c->per_launch_us = slope;
  c->fixed_us = fixed;
  return true;
}

}  // namespace

HostCostFit fitHostCosts(const std::vector<HostCostSample>& samples) {
  std::map<std::string, std::vector<const HostCostSample*>> by_op;
  HostCostFit fit;
  for (const HostCostSample& s : samples) {
    if (!(s.host_us > 0) || !std::isfinite(s.host_us)) continue;
    by_op[s.op].push_back(&s);
    ++fit.samples;
  }
  std::vector<double> launching, no_kernel;
  for (const auto& [op, points] : by_op) {
    std::vector<double> kernels;
    for (const HostCostSample* s : points) kernels.push_back(double(s->kernels));
    HostCost c;
    c.host_us = hostOfSmallerKernels(points);
    c.kernels = static_cast<int>(std::lround(core::median(kernels)));
    c.samples = static_cast<int64_t>(points.size());
    fitPerLaunch(points, &c);
    (c.kernels > 0 ? launching : no_kernel).push_back(c.host_us);
    fit.per_op[op] = c;
  }
  fit.launching_us = core::median(launching);
  fit.no_kernel_us = core::median(no_kernel);
  fit.launching_ops = static_cast<int64_t>(launching.size());
  fit.no_kernel_ops = static_cast<int64_t>(no_kernel.size());
  return fit;
}

void applyHostCosts(const HostCostFit& fit, OverheadTable* table) {
  if (!fit.ok()) return;
  auto& t2 = table->t[static_cast<int>(Overhead::kT2)];
  auto& t3 = table->t[static_cast<int>(Overhead::kT3)];
  auto& t4 = table->t[static_cast<int>(Overhead::kT4)];
  auto& t5 = table->t[static_cast<int>(Overhead::kT5)];
  auto put = [&](const std::string& key, double host_us, bool launches, int64_t count,
                 double per_launch_us = 0) {
    t2[key] = {host_us, 0.0, count};
    t3[key] = {0.0, 0.0, count};
    t4[key] = {per_launch_us, 0.0, count};
    t5[key] = {launches ? 0.0 : host_us, 0.0, count};
  };
  for (const auto& [op, c] : fit.per_op) {
    if (c.per_launch_us > 0 && c.kernels > 0)
      put(op, c.fixed_us, true, c.samples, c.per_launch_us);
    else
      put(op, c.host_us, c.kernels > 0, c.samples);
  }
  if (fit.launching_ops > 0) {
    t2[kAllOps] = {fit.launching_us, 0.0, fit.launching_ops};
    t3[kAllOps] = {0.0, 0.0, fit.launching_ops};
    t4[kAllOps] = {0.0, 0.0, fit.launching_ops};
  }
  // Ops of no kernels, and the gap between two launches of an op calibration
  // did not run: what an op that launches nothing costs.
  if (fit.no_kernel_ops > 0) t5[kAllOps] = {fit.no_kernel_us, 0.0, fit.no_kernel_ops};
  // A refit fits them again over the table it kept: one line, the latest.
  auto& sources = table->sources;
  sources.erase(
      std::remove_if(sources.begin(), sources.end(),
                     [](const std::string& line) { return line.rfind(kHostCostSource, 0) == 0; }),
      sources.end());
  sources.push_back(fmt::format(
      "{}, {} op names from {} "
      "measurements; median {:.2f} us for the {} that launch kernels, {:.2f} us for the {} that "
      "launch none",
      kHostCostSource, fit.per_op.size(), fit.samples, fit.launching_us, fit.launching_ops,
      fit.no_kernel_us, fit.no_kernel_ops));
}

}  // namespace tracetwin::predictors
