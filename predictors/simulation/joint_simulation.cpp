// The ranks advance in turns: each runs until it reaches a collective whose
// group has not all arrived, and registers its readiness there. When the
// last member registers, the collective's start is known and every member
// may pass it. A full turn in which no rank moves means the orders of
// collectives cross (the job itself would hang), which is an input error.
#include "predictors/simulation/joint_simulation.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/errors.h"

namespace tracetwin::predictors {
namespace {

struct Pending {
  size_t arrived = 0;
  std::vector<double> ready;  // per member
  std::vector<double> sigma;  // per member: the jitter of its arrival
  double transfer_us = 0;
};

// The expected latest jittered arrival. One rank standing for N identical
// ones (jitter_group N) is late by its sigma times E[max of N].
double expectedStart(const JointCollective& coll, const Pending& p) {
  if (p.ready.size() == 1 && coll.jitter_group > 1) {
    return p.ready[0] + p.sigma[0] * expectedMaxStandardNormal(coll.jitter_group);
  }
  return expectedMaxOfNormals(p.ready, p.sigma);
}

// Checks that every collective is issued once by each of its members and by
// no one else. Returns, per rank and op, the op's place among its
// collective's members.
std::vector<std::vector<size_t>> memberSlots(const std::vector<JointRank>& ranks,
                                             const std::vector<JointCollective>& collectives) {
  std::vector<std::vector<size_t>> seen(collectives.size());
  std::vector<std::vector<size_t>> slots(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    const JointRank& rank = ranks[r];
    if (rank.collective.size() != rank.ops.size()) {
      throw InputError(fmt::format("joint simulation: rank {} has {} ops and {} collective slots",
                                   r, rank.ops.size(), rank.collective.size()));
    }
    for (size_t i = 0; i < rank.ops.size(); ++i) {
      const int64_t c = rank.collective[i];
      if (c < 0) continue;
      if (size_t(c) >= collectives.size()) {
        throw InputError(fmt::format("joint simulation: rank {} op {} names collective {} of {}",
                                     r, i, c, collectives.size()));
      }
      const auto& members = collectives[size_t(c)].members;
      // Groups list their members in rank order (the world: 0..N-1).
      const bool identity = r < members.size() && members[r] == r;
      const auto at = identity ? members.begin() + std::ptrdiff_t(r)
                               : std::find(members.begin(), members.end(), r);
      if (at == members.end()) {
        throw InputError(fmt::format("joint simulation: rank {} issues {}, whose group is not "
                                     "its own",
                                     r, collectives[size_t(c)].name));
      }
      seen[size_t(c)].push_back(r);
      slots[r].resize(rank.ops.size());
      slots[r][i] = size_t(at - members.begin());
    }
  }
  for (size_t c = 0; c < collectives.size(); ++c) {
    std::vector<size_t> want = collectives[c].members;
    std::vector<size_t> got = seen[c];
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    if (want != got) {
      throw InputError(fmt::format(
          "joint simulation: {} has members {} but is issued by ranks {}", collectives[c].name,
          fmt::join(want, ","), fmt::join(got, ",")));
    }
  }
  return slots;
}

}  // namespace

JointResult simulateJoint(const std::vector<JointRank>& ranks,
                          const std::vector<JointCollective>& collectives, bool keep_schedule,
                          const SyncJitter* jitter) {
  const bool jittered = jitter != nullptr && !jitter->empty();
  const std::vector<std::vector<size_t>> slots = memberSlots(ranks, collectives);
  std::vector<RankTimeline> timelines;
  timelines.reserve(ranks.size());
  for (const JointRank& r : ranks) timelines.emplace_back(r.ops, r.start_us, keep_schedule);
  std::vector<Pending> pending(collectives.size());
  for (size_t c = 0; c < collectives.size(); ++c) {
    pending[c].ready.assign(collectives[c].members.size(), -1.0);
    pending[c].sigma.assign(collectives[c].members.size(), 0.0);
  }
  // Per rank: when it left its previous collective (its jitter restarts).
  std::vector<double> last_sync(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) last_sync[r] = ranks[r].start_us;
  JointResult result;
  result.collectives.resize(collectives.size());
  std::vector<bool> registered(ranks.size(), false);  // at its current collective
  size_t finished = 0;
  while (finished < ranks.size()) {
    bool moved = false;
    for (size_t r = 0; r < ranks.size(); ++r) {
      RankTimeline& t = timelines[r];
      if (t.done()) continue;
      while (!t.done()) {
        const size_t i = t.next();
        const int64_t c = ranks[r].collective[i];
        if (c < 0) {
          t.advance();
          moved = true;
          continue;
        }
        const JointCollective& coll = collectives[size_t(c)];
        Pending& p = pending[size_t(c)];
        if (!registered[r]) {
          p.ready[slots[r][i]] = t.readyUs();
          if (jittered) {
            const int64_t group =
                coll.jitter_group > 0 ? coll.jitter_group : int64_t(coll.members.size());
            p.sigma[slots[r][i]] = jitter->sigmaUs(group, t.readyUs() - last_sync[r]);
          }
          p.transfer_us = std::max(p.transfer_us, ranks[r].ops[i].device_us);
          ++p.arrived;
          registered[r] = true;
          moved = true;
          if (p.arrived == coll.members.size()) {
            CollectiveOutcome& o = result.collectives[size_t(c)];
            const auto last = std::max_element(p.ready.begin(), p.ready.end());
            o.start_us = jittered ? expectedStart(coll, p) : *last;
            o.transfer_us = coll.transfer_us >= 0 ? coll.transfer_us : p.transfer_us;
            o.end_us = o.start_us + o.transfer_us;
            o.last_rank = coll.members[size_t(last - p.ready.begin())];
            o.ready_us = p.ready;
          }
        }
        if (p.arrived < coll.members.size()) break;  // held until the group arrives
        t.advance(result.collectives[size_t(c)].start_us, result.collectives[size_t(c)].transfer_us);
        last_sync[r] = result.collectives[size_t(c)].end_us;
        registered[r] = false;
      }
      if (t.done()) ++finished;
    }
    if (!moved && finished < ranks.size()) {
      std::vector<std::string> held;
      for (size_t r = 0; r < ranks.size(); ++r) {
        if (timelines[r].done()) continue;
        const int64_t c = ranks[r].collective[timelines[r].next()];
        held.push_back(fmt::format("rank {} at {}", r, collectives[size_t(c)].name));
      }
      throw InputError(fmt::format(
          "joint simulation: the ranks' orders of collectives cross, so each waits for another "
          "(the job would hang): {}",
          fmt::join(held, "; ")));
    }
  }
  result.ranks.reserve(ranks.size());
  for (RankTimeline& t : timelines) result.ranks.push_back(t.finish());
  return result;
}

int64_t stragglerOf(const std::vector<JointCollective>& collectives, const JointResult& result) {
  // Charged per collective to its last member, the others' waiting would
  // follow a delay along: ranks held up by a straggler in one group arrive
  // late, together, at the next collective of a wider group. The rank the
  // others wait for waits least itself; ties go to the rank charged most.
  const size_t n = result.ranks.size();
  std::vector<double> caused(n, 0.0);
  for (size_t c = 0; c < collectives.size(); ++c) {
    const CollectiveOutcome& o = result.collectives[c];
    for (double ready : o.ready_us) caused[o.last_rank] += o.start_us - ready;
  }
  double most_wait = 0;
  for (const SimResult& r : result.ranks) most_wait = std::max(most_wait, r.wait_us);
  if (n == 0 || most_wait <= 0) return -1;
  size_t best = 0;
  for (size_t r = 1; r < n; ++r) {
    const double w = result.ranks[r].wait_us, b = result.ranks[best].wait_us;
    if (w < b || (w == b && caused[r] > caused[best])) best = r;
  }
  return int64_t(best);
}

}  // namespace tracetwin::predictors
