#include "predictors/simulation/joint_prediction.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/comm/collective_sequence.h"
#include "core/errors.h"
#include "predictors/comm/comm_model.h"
#include "predictors/comm/topology.h"
#include "predictors/simulation/colocation.h"
#include "predictors/simulation/joint_simulation.h"

namespace tracetwin::predictors {
namespace {

constexpr double kUsPerMs = 1000.0;

// A rank's prepared prediction, lightened: what the matching and the
// transfers need of its ops, and per-family totals.
struct RankWork {
  Prediction p;
  std::vector<SimOp> sim;
  std::vector<core::NodeId> ids;   // per op
  std::vector<uint8_t> recorded;   // per op: its kernel time was recorded
  std::map<std::string, FamilyTotals> families;
  std::vector<std::pair<size_t, double>> comm_bytes;  // (op, message bytes), by op

  double messageBytes(size_t op) const {
    auto it = std::lower_bound(comm_bytes.begin(), comm_bytes.end(), std::make_pair(op, -1e300));
    return it != comm_bytes.end() && it->first == op ? it->second : 0.0;
  }
};

RankWork lighten(PreparedPrediction prepared, bool keep_ops) {
  RankWork w;
  w.sim = std::move(prepared.sim);
  w.p = std::move(prepared.p);
  w.comm_bytes = std::move(prepared.comm_bytes);
  w.ids.reserve(w.p.per_op.size());
  w.recorded.reserve(w.p.per_op.size());
  for (const OpPrediction& o : w.p.per_op) {
    w.ids.push_back(o.id);
    w.recorded.push_back(o.model == "recorded" ? 1 : 0);
  }
  w.families = familyTotals(w.p);
  if (!keep_ops) {
    std::vector<OpPrediction>().swap(w.p.per_op);
    std::vector<OpPrediction>().swap(w.p.unmodelled_ops);
  }
  return w;
}

RankReport rankReport(int64_t rank, double start_us, const SimResult& res, RankWork w) {
  Prediction p = std::move(w.p);
  completePrediction(res, &p);
  RankReport r;
  r.rank = rank;
  r.start_ms = start_us / kUsPerMs;
  r.iteration_ms = res.iteration_us / kUsPerMs;
  r.compute_ms = res.compute_us / kUsPerMs;
  r.comm_ms = res.comm_us / kUsPerMs;
  r.wait_ms = res.wait_us / kUsPerMs;
  r.exposed_comm_ms = res.exposed_comm_us / kUsPerMs;
  r.prediction = std::move(p);
  r.families = std::move(w.families);
  return r;
}

// The collectives of every rank matched across ranks by group and position,
// as the distributed replay matches them before it runs them.
struct Matching {
  std::vector<JointCollective> collectives;
  std::vector<CollectiveReport> reports;
  std::vector<std::vector<int64_t>> slot_of_op;  // per rank, per op: collective or -1
  std::vector<std::vector<size_t>> member_ops;   // per collective, per member: its op
};

Matching matchCollectives(const std::vector<RankInput>& ranks, const std::vector<RankWork>& work) {
  const size_t n = ranks.size();
  std::vector<std::vector<core::comm::CollectiveStep>> steps(n);
  for (size_t r = 0; r < n; ++r)
    steps[r] = core::comm::collectiveSequence(*ranks[r].graph, work[r].ids);
  const std::vector<core::comm::MatchedCollective> matched = core::comm::matchAcrossRanks(steps);
  Matching m;
  // Per rank, the collective of each step of its sequence.
  std::vector<std::vector<size_t>> of_step(n);
  for (size_t r = 0; r < n; ++r) of_step[r].resize(steps[r].size());
  for (size_t c = 0; c < matched.size(); ++c) {
    const core::comm::MatchedCollective& mc = matched[c];
    const std::string where = mc.group.empty() ? "the default group" : "group '" + mc.group + "'";
    JointCollective jc{fmt::format("{} #{} on {}", mc.name, mc.position, where), {}};
    CollectiveReport rep;
    rep.name = mc.name;
    rep.group = mc.group;
    rep.position = mc.position;
    for (size_t k = 0; k < mc.members.size(); ++k) {
      jc.members.push_back(size_t(mc.members[k]));
      rep.members.push_back(mc.members[k]);
      rep.nodes.push_back(mc.steps[k].node);
      rep.bytes = std::max(rep.bytes, mc.steps[k].bytes);
      of_step[size_t(mc.members[k])][mc.index_in_rank[k]] = c;
    }
    rep.wait_us.assign(mc.members.size(), 0.0);
    m.collectives.push_back(std::move(jc));
    m.reports.push_back(std::move(rep));
    m.member_ops.emplace_back(mc.members.size(), 0);
  }
  m.slot_of_op.resize(n);
  for (size_t r = 0; r < n; ++r) {
    const std::vector<core::NodeId>& ids = work[r].ids;
    m.slot_of_op[r].assign(ids.size(), -1);
    size_t op = 0;  // the steps come in the order of the ops
    for (size_t i = 0; i < steps[r].size(); ++i) {
      while (ids[op] != steps[r][i].node) ++op;
      const size_t c = of_step[r][i];
      const auto& who = m.collectives[c].members;
      const size_t k = size_t(std::lower_bound(who.begin(), who.end(), r) - who.begin());
      m.member_ops[c][k] = op;
      m.slot_of_op[r][op] = int64_t(c);
    }
  }
  return m;
}

// Each member's op of a collective is its transfer now (`transfer_us`, the
// same on every member); its wait is the simulation's.
void setMemberTransfers(const CollectiveReport& rep, const std::vector<size_t>& member_ops,
                        double transfer_us, std::vector<RankWork>& work) {
  for (size_t k = 0; k < rep.members.size(); ++k) {
    RankWork& w = work[size_t(rep.members[k])];
    const size_t op = member_ops[k];
    w.families["comm"].device_us += transfer_us - w.sim[op].device_us;
    if (!w.p.per_op.empty()) w.p.per_op[op].predicted_us = transfer_us;
    w.sim[op].device_us = transfer_us;
  }
}

// A collective's kernel recorded on each member ran from that member's
// arrival to the common end: the shortest is the last arrival's, the
// transfer. Returns how many collectives took it.
int64_t recordedTransfers(std::vector<RankWork>& work, Matching* m) {
  int64_t taken = 0;
  for (size_t c = 0; c < m->collectives.size(); ++c) {
    CollectiveReport& rep = m->reports[c];
    double shortest = -1;
    bool all_recorded = true;
    for (size_t k = 0; k < rep.members.size() && all_recorded; ++k) {
      const RankWork& w = work[size_t(rep.members[k])];
      const size_t op = m->member_ops[c][k];
      all_recorded = w.recorded[op] != 0;
      const double us = w.sim[op].device_us;
      shortest = shortest < 0 ? us : std::min(shortest, us);
    }
    if (!all_recorded || shortest < 0) {
      rep.transfer_from = "model";
      continue;
    }
    m->collectives[c].transfer_us = shortest;
    rep.transfer_from = "recorded (shortest member kernel)";
    setMemberTransfers(rep, m->member_ops[c], shortest, work);
    ++taken;
  }
  return taken;
}

// On a system, a group that is not the first ranks (a pair on another node,
// every 8th rank across nodes) spans other nodes than its size suggests: its
// members' transfer is recomputed from where they are.
void placedTransfers(const SystemSpec& system, std::vector<RankWork>& work, Matching* m) {
  for (size_t c = 0; c < m->collectives.size(); ++c) {
    CollectiveReport& rep = m->reports[c];
    if (rep.transfer_from != "model") continue;
    double longest = 0;
    for (size_t k = 0; k < rep.members.size(); ++k) {
      const RankWork& w = work[size_t(rep.members[k])];
      longest = std::max(longest, 1e6 * topologySeconds(system, rep.name, rep.members,
                                                        w.messageBytes(m->member_ops[c][k])));
    }
    m->collectives[c].transfer_us = longest;
    rep.transfer_from = "topology";
    setMemberTransfers(rep, m->member_ops[c], longest, work);
  }
}

void noteJitter(const SyncJitter* jitter, int64_t group_size, std::vector<std::string>* notes) {
  if (jitter == nullptr || group_size < 2) return;
  const double sigma_ms = jitter->sigmaUs(group_size, 10 * kUsPerMs) / kUsPerMs;
  notes->push_back(fmt::format(
      "arrival jitter (the comm sweep's): a rank's arrival at a collective varies by "
      "{:.2f} ms after 10 ms of work on a group of {}, growing with the square root of the "
      "time since its previous collective; each collective starts at the expected latest "
      "arrival, {:.2f} sigma after the mean of {} identical ranks, so every member waits",
      sigma_ms, group_size, expectedMaxStandardNormal(group_size), group_size));
}

// A rank's options, its collectives sized by the job's ranks where its trace
// does not record the group.
PredictOptions rankOptions(const RankInput& rank, int64_t world_size) {
  PredictOptions opts = rank.opts;
  if (opts.default_world_size <= 1) opts.default_world_size = world_size;
  return opts;
}

// The last-level cache shares of CPU ranks on one host: an LRU cache that
// several streams fill keeps each one's lines in proportion to its
// insertions, so each rank holds its traffic's part of it (every rank runs
// the same step time, so traffic per iteration stands for the rate). A
// first preparation of every rank measures its traffic; all 1 when the
// models have no cache terms or no rank moves data.
std::vector<double> llcShares(const std::vector<RankInput>& ranks, const ModelSet& models,
                              int64_t world_size, std::vector<std::string>* notes) {
  std::vector<double> traffic(ranks.size(), 0.0);
  double total = 0;
  for (size_t r = 0; r < ranks.size(); ++r) {
    PredictOptions opts = rankOptions(ranks[r], world_size);
    opts.measure_llc_traffic = true;
    traffic[r] = preparePrediction(*ranks[r].graph, models, opts).llc_traffic_bytes;
    total += traffic[r];
  }
  std::vector<double> shares(ranks.size(), 1.0);
  if (!(total > 0)) return shares;
  // A rank that moves almost nothing still keeps what it touches in its
  // private caches; the floor only keeps distance / share finite.
  constexpr double kMinShare = 0.02;
  std::string list;
  for (size_t r = 0; r < ranks.size(); ++r) {
    shares[r] = std::clamp(traffic[r] / total, kMinShare, 1.0);
    if (r < 8) list += fmt::format("{}{:.2f}", r ? ", " : "", shares[r]);
  }
  notes->push_back(fmt::format(
      "co-located ranks share the last-level cache in proportion to their traffic through it "
      "({:.1f} MB an iteration on the host): each rank's cold inputs are judged against its "
      "share of the cache ({}{})",
      total / 1e6, list, ranks.size() > 8 ? ", ..." : ""));
  return shares;
}

// Joint simulation, with CPU ranks sharing their host's cores when they do.
JointResult simulateRanks(const std::vector<JointRank>& joint,
                          const std::vector<JointCollective>& collectives, double cores,
                          double memory_contention, const SyncJitter* jitter,
                          const MultiRankOptions& options, std::vector<std::string>* notes) {
  if (cores <= 0) return simulateJoint(joint, collectives, options.keep_schedule, jitter);
  Colocation c;
  c.hosts.push_back({{}, cores});
  for (size_t r = 0; r < joint.size(); ++r) c.hosts[0].ranks.push_back(r);
  c.threads.assign(joint.size(), options.rank_threads > 0 ? options.rank_threads : 1.0);
  c.keep_schedule = options.keep_schedule;
  c.memory_contention = memory_contention;
  c.jitter = jitter;
  ColocatedResult res = simulateColocated(joint, collectives, c);
  double busy = 0, stretched = 0;
  for (size_t r = 0; r < joint.size(); ++r) {
    for (size_t i = 0; i < joint[r].ops.size(); ++i) {
      const SimOp& op = joint[r].ops[i];
      if (!op.cpu_only || op.is_comm) continue;
      busy += op.device_us;
      stretched += op.device_us * res.stretch[r][i];
    }
  }
  // The transfers against the comm model's times (measured with nothing
  // else running), weighted by their time.
  double transfers = 0, transfers_alone = 0;
  for (size_t k = 0; k < res.joint.collectives.size(); ++k) {
    const double t = res.joint.collectives[k].transfer_us;
    transfers += t;
    transfers_alone += t / res.transfer_stretch[k];
  }
  notes->push_back(fmt::format(
      "{} ranks share {:g} cores ({:g} intra-op thread(s) each; a transfer keeps 1 busy, a wait "
      "for the group none): their CPU ops ran {:.2f}x their time alone on average, their "
      "collectives' transfers {:.2f}x the comm model's ({} pass(es){})",
      joint.size(), cores, c.threads[0], busy > 0 ? stretched / busy : 1.0,
      transfers_alone > 0 ? transfers / transfers_alone : 1.0, res.iterations,
      res.converged ? "" : ", not converged"));
  notes->push_back(
      memory_contention > 0
          ? fmt::format("co-located ranks contend for memory bandwidth: an op whose time is all "
                        "memory traffic runs {:.2f}x as long beside another such op (the device's "
                        "memory_contention)",
                        1 + memory_contention)
          : std::string("co-located ranks: shared memory bandwidth is not modelled (no "
                        "memory_contention in the device spec)"));
  return std::move(res.joint);
}

// One rank standing for `world_size` identical ones: each of its collectives
// synchronises a group of that size, whose members' arrivals differ only by
// their jitter, so it starts at the expected latest of N arrivals.
SimResult simulateStandIn(const core::Graph& graph, const RankWork& w, int64_t world_size,
                          const SyncJitter& jitter, bool keep_schedule) {
  JointRank rank;
  rank.ops = w.sim;
  rank.collective.assign(w.sim.size(), -1);
  std::vector<JointCollective> collectives;
  size_t op = 0;  // the steps come in the order of the ops
  for (const core::comm::CollectiveStep& step : core::comm::collectiveSequence(graph, w.ids)) {
    while (w.ids[op] != step.node) ++op;
    rank.collective[op] = int64_t(collectives.size());
    JointCollective c{fmt::format("{} #{}", step.name, collectives.size()), {0}};
    c.jitter_group = world_size;
    collectives.push_back(std::move(c));
  }
  return std::move(simulateJoint({std::move(rank)}, collectives, keep_schedule, &jitter).ranks[0]);
}

// One trace for N ranks on a CPU device: the cores they share are not
// modelled for it (every rank identical would need N of them simulated).
void noteCpuRanks(const ModelSet& models, const PredictOptions& opts, int64_t world_size,
                  std::vector<std::string>* notes) {
  const DeviceSpec& dest = opts.target ? *opts.target : models.device;
  if (dest.kind != DeviceKind::kCpu || world_size < 2) return;
  notes->push_back(
      "one trace for N CPU ranks is simulated as if each had a host of its own: ranks sharing "
      "one machine's cores run slower than predicted here (give every rank's trace for that)");
}

}  // namespace

const SyncJitter* syncJitterOf(const ModelSet& models, const PredictOptions& opts) {
  if (opts.system.has_value()) return nullptr;
  if (opts.target && opts.target->name != models.device.name) return nullptr;
  const auto* comm = dynamic_cast<const AlphaBetaModel*>(models.model("comm"));
  return comm != nullptr && !comm->sync_jitter.empty() ? &comm->sync_jitter : nullptr;
}

double sharedCores(const ModelSet& models, const PredictOptions& opts, int64_t world_size,
                   const MultiRankOptions& options) {
  const DeviceSpec& dest = opts.target ? *opts.target : models.device;
  if (dest.kind != DeviceKind::kCpu || world_size < 2 || options.host_cores < 0) return 0;
  if (options.host_cores > 0) return options.host_cores;
  return double(std::max<int64_t>(dest.compute_units, 1));
}

std::map<std::string, FamilyTotals> familyTotals(const Prediction& p) {
  // By interned family first: a pointer compare per op, not the map's string compares.
  std::vector<std::pair<core::InternedText, FamilyTotals>> by_family;
  for (const OpPrediction& o : p.per_op) {
    auto it = std::find_if(by_family.begin(), by_family.end(),
                           [&](const auto& entry) { return entry.first == o.family; });
    if (it == by_family.end()) it = by_family.insert(it, {o.family, FamilyTotals{}});
    FamilyTotals& t = it->second;
    ++t.ops;
    t.device_us += o.predicted_us;
    t.cpu_us += o.cpu_us;
  }
  std::map<std::string, FamilyTotals> out;
  for (const auto& [family, totals] : by_family) out.emplace(family.str(), totals);
  return out;
}

MultiRankPrediction predictRanks(const std::vector<RankInput>& ranks, const ModelSet& models,
                                 const MultiRankOptions& options) {
  if (ranks.empty()) throw UsageError("multi-rank prediction needs at least one rank");
  MultiRankPrediction out;
  out.world_size = int64_t(ranks.size());
  const double cores = sharedCores(models, ranks[0].opts, int64_t(ranks.size()), options);
  std::vector<std::string> sharing;
  const std::vector<double> llc_shares = cores > 0
                                             ? llcShares(ranks, models, out.world_size, &sharing)
                                             : std::vector<double>(ranks.size(), 1.0);
  std::vector<RankWork> work;
  work.reserve(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    PredictOptions opts = rankOptions(ranks[r], out.world_size);
    opts.llc_share = llc_shares[r];
    work.push_back(lighten(preparePrediction(*ranks[r].graph, models, opts),
                           r == 0 || options.every_rank_ops || options.keep_schedule));
  }
  Matching m = matchCollectives(ranks, work);
  const int64_t recorded = recordedTransfers(work, &m);
  if (ranks[0].opts.system) placedTransfers(*ranks[0].opts.system, work, &m);
  std::vector<JointRank> joint(ranks.size());
  const double earliest =
      std::min_element(ranks.begin(), ranks.end(), [](const RankInput& a, const RankInput& b) {
        return a.start_us < b.start_us;
      })->start_us;
  for (size_t r = 0; r < ranks.size(); ++r) {
    joint[r].ops = std::move(work[r].sim);
    joint[r].start_us = ranks[r].start_us - earliest;
    joint[r].collective = std::move(m.slot_of_op[r]);
  }
  const DeviceSpec& dest = ranks[0].opts.target ? *ranks[0].opts.target : models.device;
  const SyncJitter* jitter = syncJitterOf(models, ranks[0].opts);
  JointResult res = simulateRanks(joint, m.collectives, cores, dest.memory_contention.value_or(0.0),
                                  jitter, options, &sharing);
  noteJitter(jitter, int64_t(ranks.size()), &sharing);
  for (size_t c = 0; c < m.reports.size(); ++c) {
    CollectiveReport& rep = m.reports[c];
    const CollectiveOutcome& o = res.collectives[c];
    rep.start_ms = o.start_us / kUsPerMs;
    rep.transfer_us = o.transfer_us;
    rep.last_rank = int64_t(o.last_rank);
    for (size_t k = 0; k < o.ready_us.size(); ++k) rep.wait_us[k] = o.start_us - o.ready_us[k];
  }
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (options.keep_schedule) attachSchedule(joint[r].ops, &res.ranks[r], &work[r].p);
    out.ranks.push_back(
        rankReport(int64_t(r), joint[r].start_us, res.ranks[r], std::move(work[r])));
    if (out.ranks.back().iteration_ms > out.iteration_ms) {
      out.iteration_ms = out.ranks.back().iteration_ms;
      out.slowest_rank = int64_t(r);
    }
  }
  out.straggler = stragglerOf(m.collectives, res);
  out.collectives = std::move(m.reports);
  out.notes.push_back(fmt::format("{} ranks simulated together; {} collectives matched across "
                                  "them by group and position",
                                  ranks.size(), out.collectives.size()));
  if (recorded > 0) {
    out.notes.push_back(fmt::format(
        "{} collectives took their transfer from the recorded kernels: the shortest member's "
        "(every member's kernel ends together, so the shortest started last; the others' include "
        "their wait)",
        recorded));
  }
  if (std::any_of(ranks.begin(), ranks.end(),
                  [&](const RankInput& r) { return r.start_us != earliest; })) {
    out.notes.push_back("ranks entered the iteration at different times (start_ms)");
  }
  for (std::string& n : sharing) out.notes.push_back(std::move(n));
  return out;
}

MultiRankPrediction predictSymmetric(const core::Graph& graph, int64_t world_size,
                                     const ModelSet& models, PredictOptions opts) {
  if (world_size < 1) throw UsageError(fmt::format("world size {} < 1", world_size));
  opts.default_world_size = world_size;
  opts.force_world_size = true;
  RankWork w = lighten(preparePrediction(graph, models, opts), true);
  const SyncJitter* jitter = world_size > 1 ? syncJitterOf(models, opts) : nullptr;
  SimResult res = jitter != nullptr
                      ? simulateStandIn(graph, w, world_size, *jitter, opts.keep_schedule)
                      : simulate(w.sim, opts.keep_schedule);
  if (opts.keep_schedule) attachSchedule(w.sim, &res, &w.p);
  MultiRankPrediction out;
  out.world_size = world_size;
  out.symmetric = true;
  out.ranks.push_back(rankReport(0, 0, res, std::move(w)));
  out.iteration_ms = out.ranks[0].iteration_ms;
  out.notes.push_back(
      jitter != nullptr
          ? fmt::format("one trace for {} identical ranks: every collective on all {} ranks, "
                        "whose arrivals differ only by their jitter",
                        world_size, world_size)
          : fmt::format("one trace for {} identical ranks: every collective on all {} ranks, "
                        "which arrive together (no rank waits for another)",
                        world_size, world_size));
  noteJitter(jitter, world_size, &out.notes);
  noteCpuRanks(models, opts, world_size, &out.notes);
  return out;
}

nlohmann::json multiRankToJson(const MultiRankPrediction& m) {
  nlohmann::json j = predictionToJson(m.ranks.at(0).prediction);
  j["rank0_iteration_ms"] = m.ranks[0].iteration_ms;
  j["iteration_ms"] = m.iteration_ms;
  j["world_size"] = m.world_size;
  j["symmetric"] = m.symmetric;
  j["slowest_rank"] = m.slowest_rank;
  j["straggler"] = m.straggler >= 0 ? nlohmann::json(m.straggler) : nlohmann::json(nullptr);
  j["ranks"] = nlohmann::json::array();
  for (const RankReport& r : m.ranks) {
    nlohmann::json row{{"rank", r.rank},
                       {"start_ms", r.start_ms},
                       {"iteration_ms", r.iteration_ms},
                       {"compute_ms", r.compute_ms},
                       {"comm_ms", r.comm_ms},
                       {"wait_ms", r.wait_ms},
                       {"exposed_comm_ms", r.exposed_comm_ms}};
    if (m.symmetric) row["stands_for_ranks"] = m.world_size;
    nlohmann::json fam = nlohmann::json::object();
    for (const auto& [family, t] : r.families)
      fam[family] = {{"count", t.ops}, {"device_us", t.device_us}, {"cpu_us", t.cpu_us}};
    row["families"] = std::move(fam);
    j["ranks"].push_back(std::move(row));
  }
  j["collectives"] = nlohmann::json::array();
  for (const CollectiveReport& c : m.collectives) {
    j["collectives"].push_back({{"name", c.name},
                                {"group", c.group},
                                {"position", c.position},
                                {"members", c.members},
                                {"nodes", c.nodes},
                                {"bytes", c.bytes},
                                {"start_ms", c.start_ms},
                                {"transfer_us", c.transfer_us},
                                {"transfer_from", c.transfer_from},
                                {"last_rank", c.last_rank},
                                {"wait_us", c.wait_us}});
  }
  std::vector<std::string> notes = m.notes;
  for (const std::string& n : m.ranks[0].prediction.notes) notes.push_back(n);
  j["notes"] = notes;
  return j;
}

}  // namespace tracetwin::predictors
