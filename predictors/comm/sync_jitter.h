// Synchronisation jitter: why ranks wait for each other even when their
// predicted work is the same. Each rank's arrival at a collective varies
// from step to step (the host's scheduler, its other tenants, the kernel's
// ticks), and a collective starts at the *latest* arrival of its group, so
// the expected start is E[max_i (a_i + e_i)], not max_i a_i: the more ranks,
// the later (OS-noise amplification in HPC collectives; LogGOPSim injects
// such noise). The joint simulation takes the deterministic arrivals a_i
// and, with this model, the expected latest one.
//
// Model: e_i ~ Normal(0, v_p * T_i), the variance growing with T_i, the
// time rank i ran since its previous collective (independent disturbances
// add up), v_p measured for group size p by the comm sweep
// (`calibrate --families comm`), whose collectives follow a compute spacer:
// a rank's mean wait there is sigma * e_p (e_p = E[max of p standard
// normals]), so v_p = (wait / e_p)^2 / T. docs/prediction.md, "Multi-rank".
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

namespace tracetwin::predictors {

// E[max of n independent standard normals]: 0 for n <= 1, 0.564 for 2,
// 0.846 for 3, 1.029 for 4, 3.24 for 1,000.
double expectedMaxStandardNormal(int64_t n);

// E[max_i X_i] for independent X_i ~ Normal(means[i], sigmas[i]^2); a
// sigma of 0 is a fixed time. Exactly max(means) when every sigma is 0.
double expectedMaxOfNormals(const std::vector<double>& means, const std::vector<double>& sigmas);

struct SyncJitter {
  // Group size -> v (us^2 of arrival variance per us run since the rank's
  // previous collective).
  std::map<int64_t, double> variance_per_us;

  bool empty() const { return variance_per_us.empty(); }
  // sigma (us) of a rank's arrival in a group of `group_size` after running
  // `since_us`: v of the nearest measured group size (the largest below it,
  // else the smallest).
  double sigmaUs(int64_t group_size, double since_us) const;

  nlohmann::json toJson() const;
  // Throws InputError naming the field when it is malformed.
  static SyncJitter fromJson(const nlohmann::json& j);
};

// v for one group size from a sweep: the ranks' mean wait (us) at
// collectives that followed `since_us` of compute on every rank.
double jitterVarianceFromWait(int64_t group_size, double mean_wait_us, double since_us);

}  // namespace tracetwin::predictors
