#include "predictors/comm/sync_jitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>

#include "core/errors.h"

namespace tracetwin::predictors {
namespace {

double normalCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// E[max] = lo + integral over [lo, hi] of (1 - prod_i F_i(x)) dx, with every
// X_i above lo almost surely (lo = min_i (mean_i - 8 sigma_i)). Simpson's
// rule on a grid of 1/8 of the narrowest sigma, but no finer than 1/64 of the
// widest: a member that just left a collective (sigma ~0) next to one that
// ran long would otherwise ask for 10^4 points at every collective.
double integrateMax(const std::vector<double>& means, const std::vector<double>& sigmas) {
  double lo = INFINITY, hi = -INFINITY, narrowest = INFINITY;
  for (size_t i = 0; i < means.size(); ++i) {
    lo = std::min(lo, means[i] - 8 * sigmas[i]);
    hi = std::max(hi, means[i] + 8 * sigmas[i]);
    if (sigmas[i] > 0) narrowest = std::min(narrowest, sigmas[i]);
  }
  narrowest = std::max(narrowest, *std::max_element(sigmas.begin(), sigmas.end()) / 8);
  const int steps = int(std::clamp(std::ceil((hi - lo) / narrowest * 8), 64.0, 20000.0)) & ~1;
  const double h = (hi - lo) / steps;
  auto tail = [&](double x) {
    double all_below = 1;
    for (size_t i = 0; i < means.size(); ++i) {
      all_below *= sigmas[i] > 0 ? normalCdf((x - means[i]) / sigmas[i]) : (x >= means[i] ? 1 : 0);
    }
    return 1 - all_below;
  };
  double sum = tail(lo) + tail(hi);
  for (int k = 1; k < steps; ++k) sum += (k % 2 ? 4 : 2) * tail(lo + k * h);
  return lo + sum * h / 3;
}

}  // namespace

double expectedMaxStandardNormal(int64_t n) {
  if (n <= 1) return 0;
  // Cached: a symmetric prediction asks for the same n at every collective.
  static std::mutex mutex;
  static std::map<int64_t, double> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(n); it != cache.end()) return it->second;
  // E[max] = integral of x * n * phi(x) * Phi(x)^(n-1) over x; Simpson on
  // [-10, 10], where the integrand has all its mass for any n < 1e20.
  constexpr int kSteps = 4000;
  const double h = 20.0 / kSteps;
  double sum = 0;
  for (int k = 0; k <= kSteps; ++k) {
    const double x = -10 + k * h;
    const double phi = std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
    const double f = x * double(n) * phi * std::pow(normalCdf(x), double(n - 1));
    sum += (k == 0 || k == kSteps ? 1 : (k % 2 ? 4 : 2)) * f;
  }
  return cache[n] = sum * h / 3;
}

double expectedMaxOfNormals(const std::vector<double>& means, const std::vector<double>& sigmas) {
  if (means.empty()) return 0;
  const double latest = *std::max_element(means.begin(), means.end());
  // Members that cannot be last (8 sigmas below a fixed latest arrival) and
  // the all-fixed case need no integral.
  std::vector<double> m, s;
  for (size_t i = 0; i < means.size(); ++i) {
    const double sigma = i < sigmas.size() ? std::max(sigmas[i], 0.0) : 0.0;
    if (means[i] + 8 * sigma < latest) continue;
    m.push_back(means[i]);
    s.push_back(sigma);
  }
  if (std::all_of(s.begin(), s.end(), [](double x) { return x == 0; })) return latest;
  // Identical members (a symmetric group): the closed form's constant.
  if (std::all_of(m.begin(), m.end(), [&](double x) { return x == m[0]; }) &&
      std::all_of(s.begin(), s.end(), [&](double x) { return x == s[0]; })) {
    return m[0] + s[0] * expectedMaxStandardNormal(int64_t(m.size()));
  }
  return std::max(latest, integrateMax(m, s));
}

double SyncJitter::sigmaUs(int64_t group_size, double since_us) const {
  if (variance_per_us.empty() || group_size < 2 || since_us <= 0) return 0;
  auto it = variance_per_us.upper_bound(group_size);  // first measured size above
  const double v = it == variance_per_us.begin() ? it->second : std::prev(it)->second;
  return std::sqrt(std::max(v, 0.0) * since_us);
}

nlohmann::json SyncJitter::toJson() const {
  nlohmann::json by = nlohmann::json::object();
  for (const auto& [p, v] : variance_per_us) by[std::to_string(p)] = v;
  return {{"variance_us2_per_us", by}};
}

SyncJitter SyncJitter::fromJson(const nlohmann::json& j) {
  SyncJitter out;
  if (!j.is_object() || !j.contains("variance_us2_per_us") ||
      !j["variance_us2_per_us"].is_object()) {
    throw InputError(
        "sync_jitter: expected an object with 'variance_us2_per_us' (group size -> "
        "variance per us)");
  }
  for (const auto& [key, value] : j["variance_us2_per_us"].items()) {
    int64_t p = 0;
    try {
      size_t used = 0;
      p = std::stoll(key, &used);
      if (used != key.size()) p = 0;
    } catch (const std::exception&) {
      p = 0;
    }
    if (p < 2) {
      throw InputError(fmt::format("sync_jitter: group size '{}' is not an integer >= 2", key));
    }
    if (!value.is_number() || value.get<double>() < 0) {
      throw InputError(
          fmt::format("sync_jitter: the variance of group size {} must be a number >= 0", p));
    }
    out.variance_per_us[p] = value.get<double>();
  }
  return out;
}

double jitterVarianceFromWait(int64_t group_size, double mean_wait_us, double since_us) {
  const double e = expectedMaxStandardNormal(group_size);
  if (e <= 0 || since_us <= 0 || mean_wait_us <= 0) return 0;
  const double sigma = mean_wait_us / e;
  return sigma * sigma / since_us;
}

}  // namespace tracetwin::predictors
