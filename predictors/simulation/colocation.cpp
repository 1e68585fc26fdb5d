// Processor sharing of co-located ranks by a fixed point over the joint
// simulation (docs/prediction.md "Co-located ranks"). The ranks advance in
// turns, not on one clock, so the sharing cannot be applied while they run;
// instead each pass reads every host's demand D(t) (threads wanted at time
// t) from the previous pass's spans and gives each CPU op the stretch
//   s = L / integral over its span L of v(t) dt,
//   v(t) = min(1, C / D(t)) / min(1, C / T)
// (its speed against its calibrated speed alone), until no stretch moves.
// With a memory contention kappa, v(t) also divides by 1 + kappa * m * M'(t):
// m the op's memory share, M'(t) the other ops' of the host running then.
#include "predictors/simulation/colocation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/errors.h"

namespace tracetwin::predictors {
namespace {

bool stretchable(const SimOp& op) { return op.cpu_only && !op.is_comm; }

// Threads wanted on one host, and the memory shares of its ops running, as
// step functions: demand[k] and memory[k] hold on [times[k], times[k+1]).
struct Demand {
  std::vector<double> times;
  std::vector<double> demand;
  std::vector<double> memory;

  // Integral over [s, e] of the speed of an op with `threads` threads and
  // memory share `share` (itself among the running ops).
  double work(double s, double e, double cores, double threads, double share, double kappa) const {
    auto k = size_t(std::upper_bound(times.begin(), times.end(), s) - times.begin());
    k = k == 0 ? 0 : k - 1;
    double done = 0, t = s;
    for (; k + 1 < times.size() && t < e; ++k) {
      const double b = std::min(e, times[k + 1]);
      if (b > t) {
        const double others =
            std::max(0.0, memory[k] - share) * besideShare(cores, demand[k], threads);
        done += (b - t) * sharedSpeed(cores, std::max(demand[k], threads), threads) *
                memorySpeed(kappa, share, others);
      }
      t = std::max(t, b);
    }
    if (t < e) done += (e - t);  // past the last event nobody else runs
    return done;
  }
};

Demand demandOf(const SharedHost& host, const std::vector<JointRank>& ranks,
                const JointResult& res, const Colocation& c) {
  // Per event time: (threads, memory share) starting minus ending there.
  std::map<double, std::pair<double, double>> delta;
  for (size_t r : host.ranks) {
    const SimResult& s = res.ranks[r];
    for (size_t i = 0; i < ranks[r].ops.size(); ++i) {
      const SimOp& op = ranks[r].ops[i];
      const double want = stretchable(op) ? c.threads[r] : op.is_comm ? c.transfer_threads : 0.0;
      if (want <= 0 || !(s.end_us[i] > s.start_us[i])) continue;
      const double share = stretchable(op) ? op.memory_share : 0.0;
      // The T1 gap before the body is the rank's thread at work too (the
      // framework's dispatch, freeing what earlier ops made); it moves no
      // tensor data. (An op that then waited for a collective had its gap
      // before the wait; it is counted as ending at the body's start.)
      const double from = stretchable(op) ? s.start_us[i] - op.t1 : s.start_us[i];
      delta[from].first += want;
      delta[s.start_us[i]].second += share;
      delta[s.end_us[i]].first -= want;
      delta[s.end_us[i]].second -= share;
    }
  }
  Demand d;
  double level = 0, memory = 0;
  for (const auto& [t, change] : delta) {
    level += change.first;
    memory += change.second;
    d.times.push_back(t);
    d.demand.push_back(std::max(0.0, level));
    d.memory.push_back(std::max(0.0, memory));
  }
  return d;
}

void validate(const std::vector<JointRank>& ranks, const Colocation& c) {
  if (c.threads.size() != ranks.size()) {
    throw UsageError(fmt::format("co-location: {} thread counts for {} ranks", c.threads.size(),
                                 ranks.size()));
  }
  if (!(c.memory_contention >= 0) || !std::isfinite(c.memory_contention)) {
    throw UsageError(
        fmt::format("co-location: memory contention {} (expected >= 0)", c.memory_contention));
  }
  std::vector<int> seen(ranks.size(), 0);
  for (const SharedHost& h : c.hosts) {
    if (!(h.cores > 0)) throw UsageError(fmt::format("co-location: a host has {} cores", h.cores));
    for (size_t r : h.ranks) {
      if (r >= ranks.size() || seen[r]++) {
        throw UsageError(fmt::format("co-location: rank {} is out of range or on two hosts", r));
      }
      if (!(c.threads[r] > 0))
        throw UsageError(fmt::format("co-location: rank {} has {} threads", r, c.threads[r]));
    }
  }
}

}  // namespace

double sharedSpeed(double cores, double demand, double own_threads) {
  const double alone = std::min(1.0, cores / own_threads);
  const double now = demand > 0 ? std::min(1.0, cores / demand) : 1.0;
  return now / alone;
}

std::vector<double> sharedFinishTimes(const std::vector<double>& alone, double cores,
                                      double threads, double kappa,
                                      const std::vector<double>& memory_shares) {
  if (!(cores > 0)) return alone;
  const size_t n = alone.size();
  const auto shareOf = [&](size_t r) { return r < memory_shares.size() ? memory_shares[r] : 0.0; };
  std::vector<double> left = alone, finish(n, 0.0), speed(n, 0.0);
  std::vector<size_t> running;
  for (size_t r = 0; r < n; ++r) {
    if (left[r] > 0) running.push_back(r);
  }
  double t = 0;
  while (!running.empty()) {
    const double demand = double(running.size()) * threads;
    const double core_speed = sharedSpeed(cores, demand, threads);
    const double beside = besideShare(cores, demand, threads);
    double streams = 0;
    for (size_t r : running) streams += shareOf(r);
    // Until the next job is done, every running one keeps its speed.
    double step = std::numeric_limits<double>::infinity();
    for (size_t r : running) {
      speed[r] = core_speed * memorySpeed(kappa, shareOf(r), (streams - shareOf(r)) * beside);
      step = std::min(step, left[r] / speed[r]);
    }
    t += step;
    std::vector<size_t> still;
    for (size_t r : running) {
      left[r] -= speed[r] * step;
      if (left[r] > 1e-12 * alone[r]) {
        still.push_back(r);
      } else {
        finish[r] = t;
      }
    }
    running.swap(still);
  }
  return finish;
}

double besideShare(double cores, double demand, double threads) {
  if (demand <= cores) return 1.0;
  const double others = demand - threads;
  return others > 0 ? std::clamp((cores - threads) / others, 0.0, 1.0) : 1.0;
}

double memoryShare(double bytes, double bandwidth, double op_us) {
  if (!(bandwidth > 0) || !(op_us > 0) || !(bytes > 0)) return 0.0;
  return std::min(1.0, bytes / bandwidth * 1e6 / op_us);
}

double memorySpeed(double kappa, double own, double others) {
  if (!(kappa > 0)) return 1.0;
  return 1.0 / (1.0 + kappa * own * others);
}

namespace {

// Per collective, the members on each shared host (host index -> count):
// a transfer's threads run on its members' hosts.
std::vector<std::map<size_t, double>> membersByHost(const std::vector<JointCollective>& collectives,
                                                    const Colocation& c, size_t rank_count) {
  std::vector<int64_t> host_of(rank_count, -1);
  for (size_t h = 0; h < c.hosts.size(); ++h) {
    if (c.hosts[h].ranks.size() < 2) continue;  // alone: nothing to share
    for (size_t r : c.hosts[h].ranks) host_of[r] = int64_t(h);
  }
  std::vector<std::map<size_t, double>> out(collectives.size());
  for (size_t k = 0; k < collectives.size(); ++k) {
    for (size_t r : collectives[k].members) {
      if (r < rank_count && host_of[r] >= 0) out[k][size_t(host_of[r])] += 1.0;
    }
  }
  return out;
}

// The stretch a collective's transfer got: its span over the work its
// slowest host let it do. The comm models were measured with every member
// of the group on one host moving data and nothing else running (the comm
// sweep), so the speed is against that: the members' transfer threads on
// the host are the "own" threads of sharedSpeed.
double transferStretch(const CollectiveOutcome& o, const std::map<size_t, double>& hosts,
                       const std::vector<Demand>& demands, const Colocation& c) {
  const double span = o.end_us - o.start_us;
  if (hosts.empty() || !(span > 0) || !(c.transfer_threads > 0)) return 1.0;
  double work = span;
  for (const auto& [h, members] : hosts) {
    work = std::min(work, demands[h].work(o.start_us, o.end_us, c.hosts[h].cores,
                                          members * c.transfer_threads, 0.0, 0.0));
  }
  return work > 0 ? span / work : 1.0;
}

}  // namespace

ColocatedResult simulateColocated(const std::vector<JointRank>& ranks,
                                  const std::vector<JointCollective>& collectives,
                                  const Colocation& colocation) {
  validate(ranks, colocation);
  ColocatedResult out;
  out.stretch.resize(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) out.stretch[r].assign(ranks[r].ops.size(), 1.0);
  out.transfer_stretch.assign(collectives.size(), 1.0);
  std::vector<JointRank> scaled = ranks;
  std::vector<JointCollective> scaled_collectives = collectives;
  const std::vector<std::map<size_t, double>> collective_hosts =
      membersByHost(collectives, colocation, ranks.size());
  // Jumps to the new stretch in the first two passes, then half way, so that
  // two ranks taking turns on the cores cannot swap for ever.
  const auto settle = [](double& f, double wanted, int pass, double& moved) {
    moved = std::max(moved, std::abs(wanted - f) / f);
    f = pass <= 2 ? wanted : 0.5 * (f + wanted);
  };
  for (int pass = 1;; ++pass) {
    for (size_t r = 0; r < ranks.size(); ++r) {
      for (size_t i = 0; i < ranks[r].ops.size(); ++i) {
        const SimOp& base = ranks[r].ops[i];
        SimOp& op = scaled[r].ops[i];
        if (base.is_comm && ranks[r].collective.size() > i && ranks[r].collective[i] >= 0) {
          // A member's own transfer time (a collective without one of its own
          // takes the longest of them).
          op.device_us = base.device_us * out.transfer_stretch[size_t(ranks[r].collective[i])];
          continue;
        }
        if (!stretchable(base)) continue;
        const double f = out.stretch[r][i];
        op.t1 = base.t1 * f;
        op.t2 = base.t2 * f;
        op.t3 = base.t3 * f;
        op.device_us = base.device_us * f;
      }
    }
    for (size_t k = 0; k < collectives.size(); ++k) {
      if (collectives[k].transfer_us >= 0) {
        scaled_collectives[k].transfer_us = collectives[k].transfer_us * out.transfer_stretch[k];
      }
    }
    out.joint =
        simulateJoint(scaled, scaled_collectives, colocation.keep_schedule, colocation.jitter);
    out.iterations = pass;
    double moved = 0;
    std::vector<Demand> demands(colocation.hosts.size());
    for (size_t h = 0; h < colocation.hosts.size(); ++h) {
      if (colocation.hosts[h].ranks.size() >= 2) {
        demands[h] = demandOf(colocation.hosts[h], scaled, out.joint, colocation);
      }
    }
    for (size_t k = 0; k < collectives.size(); ++k) {
      const double wanted =
          transferStretch(out.joint.collectives[k], collective_hosts[k], demands, colocation);
      settle(out.transfer_stretch[k], wanted, pass, moved);
    }
    for (size_t hi = 0; hi < colocation.hosts.size(); ++hi) {
      const SharedHost& h = colocation.hosts[hi];
      if (h.ranks.size() < 2) continue;
      const Demand& d = demands[hi];
      for (size_t r : h.ranks) {
        const SimResult& s = out.joint.ranks[r];
        for (size_t i = 0; i < ranks[r].ops.size(); ++i) {
          if (!stretchable(ranks[r].ops[i])) continue;
          // Its T1 gap and its body, stretched alike.
          const double gap = scaled[r].ops[i].t1;
          const double span = s.end_us[i] - s.start_us[i] + gap;
          if (!(span > 0)) continue;
          const double work = d.work(s.start_us[i] - gap, s.start_us[i], h.cores,
                                     colocation.threads[r], 0.0, colocation.memory_contention) +
                              d.work(s.start_us[i], s.end_us[i], h.cores, colocation.threads[r],
                                     ranks[r].ops[i].memory_share, colocation.memory_contention);
          settle(out.stretch[r][i], work > 0 ? span / work : 1.0, pass, moved);
        }
      }
    }
    if (moved <= colocation.tolerance) break;
    if (pass >= colocation.max_iterations) {
      out.converged = false;
      break;
    }
  }
  return out;
}

}  // namespace tracetwin::predictors
