#include "replay/dist/rank_session.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <deque>
#include <mutex>
#include <set>
#include <thread>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <unordered_map>

#include "core/comm/collective_sequence.h"
#include "replay/comm/c10d_backend.h"
#include "replay/comm/collective_names.h"
#include "replay/comm/comm_replayer.h"
#include "replay/device/device_timer.h"
#include "replay/device/mark_clock.h"
#include "replay/dist/host_identity.h"

namespace tracetwin::replay::dist {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::milliseconds(20);
// How long a rank whose collective failed listens for its peers' reports
// before it names the silent ones.
constexpr auto kListenForPeers = std::chrono::seconds(2);

std::string firstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string key(const char* what, int rank) { return fmt::format("tracetwin/{}/{}", what, rank); }

std::vector<uint8_t> bytesOf(const std::string& s) { return {s.begin(), s.end()}; }
std::string textOf(const std::vector<uint8_t>& b) { return {b.begin(), b.end()}; }

}  // namespace

struct RankSession::Impl : comm::CollectiveObserver {
  RankSessionOptions options;
  std::chrono::milliseconds timeout{0};
  c10::intrusive_ptr<c10d::Store> store;
  std::shared_ptr<comm::CommGroups> groups;
  std::unique_ptr<comm::CommReplayer> comm;
  std::unique_ptr<device::MarkClock> clock;
  std::vector<CollectiveStep> sequence;
  std::unordered_map<core::NodeId, size_t> step_of_node;  // node -> index in `sequence`
  // The current iteration's collective calls. On a CPU the times are the
  // host's (an async Gloo collective completes on Gloo's thread); on CUDA
  // they are event marks on the device's timeline (MarkClock indices).
  struct Call {
    size_t step = 0;
    Clock::time_point arrive_at, complete_at;
    size_t arrive_mark = 0, complete_mark = 0;
    bool completed = false;
  };
  std::mutex calls_mutex;  // completedAt() comes from Gloo's threads
  std::deque<Call> calls;
  Clock::time_point origin_at;
  bool device_marks = false;  // CUDA: MarkClock events
  std::vector<size_t> call_steps;  // the steps of the first measured iteration's calls
  RankTimes times;
  double origin_us = 0;  // this iteration's origin on the monotonic clock
  // Where this rank is, for failure messages.
  const core::Node* in_collective = nullptr;
  std::string phase = "start-up";
  int iterations_begun = 0;  // beginIteration's calls: its stop keys

  int rank() const { return options.env.rank; }
  int world() const { return options.env.world_size; }

  size_t arrive(const core::Node& node, comm::Collective /*kind*/) override {
    in_collective = &node;
    auto it = step_of_node.find(node.id);
    Call call;
    call.step = it == step_of_node.end() ? sequence.size() : it->second;
    if (device_marks) {
      call.arrive_mark = clock->mark();
    } else {
      call.arrive_at = Clock::now();
    }
    std::lock_guard<std::mutex> lock(calls_mutex);
    calls.push_back(call);
    return calls.size() - 1;
  }
  void complete(size_t id) override {
    const size_t mark = device_marks ? clock->mark() : 0;
    const auto now = Clock::now();
    std::lock_guard<std::mutex> lock(calls_mutex);
    Call& c = calls.at(id);
    c.complete_mark = mark;
    c.complete_at = now;
    c.completed = true;
    in_collective = nullptr;
  }
  void completedAt(size_t id, Clock::time_point when) override {
    std::lock_guard<std::mutex> lock(calls_mutex);
    Call& c = calls.at(id);
    c.complete_at = when;
    c.completed = true;
  }

  // The iteration's calls as marks relative to its origin. The replay waited
  // for every collective before the iteration ended; a completion callback
  // may still be on its way from Gloo's thread for a moment.
  std::vector<CallMarks> iterationMarks(std::vector<size_t>& steps) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(calls_mutex);
        if (std::all_of(calls.begin(), calls.end(), [](const Call& c) { return c.completed; }))
          break;
      }
      if (Clock::now() > deadline) {
        throw RuntimeFailure(fmt::format("rank {}: a collective of this iteration never reported "
                                         "its completion",
                                         rank()));
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    std::lock_guard<std::mutex> lock(calls_mutex);
    std::vector<CallMarks> marks;
    const std::vector<double> us = device_marks ? clock->resolveUs() : std::vector<double>{};
    const auto since = [&](Clock::time_point t) {
      return std::chrono::duration<double, std::micro>(t - origin_at).count();
    };
    for (const Call& c : calls) {
      if (device_marks) {
        marks.push_back({us.at(c.arrive_mark), us.at(c.complete_mark)});
      } else {
        marks.push_back({since(c.arrive_at), since(c.complete_at)});
      }
      steps.push_back(c.step);
    }
    return marks;
  }

  // Store calls: when the store's host is gone they throw c10d's socket
  // errors, which say nothing of ranks; this says who hosted it.
  template <typename Call>
  auto onStore(Call call) -> decltype(call()) {
    try {
      return call();
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw PeerFailure(fmt::format(
          "rank {}: the rendezvous store at {}:{} stopped answering ({}); {} hosted it and is "
          "gone",
          rank(), options.env.master_addr, options.env.master_port, firstLine(e.what()),
          options.env.agent_store ? "the launcher's agent" : "rank 0"));
    }
  }
  void set(const char* what, const std::string& value) {
    onStore([&] { store->set(key(what, rank()), bytesOf(value)); });
  }
  bool has(const std::string& k) {
    return onStore([&] { return store->check({k}); });
  }
  std::string get(const std::string& k) {
    return onStore([&] { return textOf(store->get(k)); });
  }

  // Waits until every rank in `ranks` posted `what`, watching for failure
  // reports; throws PeerFailure naming the ranks that failed or stayed away.
  void awaitRanks(const char* what, const std::vector<int>& ranks, const std::string& step) {
    std::vector<int> pending = ranks;
    const auto deadline = Clock::now() + timeout;
    while (!pending.empty()) {
      for (auto it = pending.begin(); it != pending.end();) {
        if (has(key(what, *it))) {
          it = pending.erase(it);
          continue;
        }
        if (has(key("failed", *it))) {
          throw PeerFailure(fmt::format("rank {}: rank {} failed before {}: {}", rank(), *it,
                                        step, get(key("failed", *it))));
        }
        ++it;
      }
      if (pending.empty()) break;
      if (Clock::now() > deadline) {
        throw PeerFailure(fmt::format(
            "rank {}: rank(s) {} did not reach {} within {:.0f} s (--comm-timeout-s): they hang, "
            "died without a word, or never started",
            rank(), fmt::join(pending, ", "), step, timeout.count() / 1000.0));
      }
      std::this_thread::sleep_for(kPoll);
    }
  }

  std::vector<int> allRanks() const {
    std::vector<int> ranks;
    for (int i = 0; i < world(); ++i) ranks.push_back(i);
    return ranks;
  }

  comm::BackendHandle makeGroup(const std::string& prefix, int group_rank, int size) {
    comm::GroupRendezvous rv;
    rv.store = c10::make_intrusive<c10d::PrefixStore>(prefix, store);
    rv.rank = group_rank;
    rv.size = size;
    rv.timeout = timeout;
    rv.loopback = isLoopback(options.env.master_addr);
    return comm::makeBackend(options.device, rv);
  }
};

RankSession::RankSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RankSession::~RankSession() = default;

std::shared_ptr<RankSession> RankSession::connect(const RankSessionOptions& options) {
  // A peer that dies leaves Gloo's socket to it closed: a write to it raises
  // SIGPIPE, which would end this rank without a word. Ignored, the write
  // fails with EPIPE, and the failure is explained like any other (Python
  // ignores SIGPIPE too, so PyTorch's own ranks never met this). This process
  // is a rank for the rest of its life: the setting is not undone.
  std::signal(SIGPIPE, SIG_IGN);
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->timeout = std::chrono::milliseconds(int64_t(options.comm_timeout_s * 1000.0));
  const RankEnv& env = options.env;
  c10d::TCPStoreOptions store_options;
  store_options.port = uint16_t(env.master_port);
  store_options.isServer = env.hostsStore();
  store_options.numWorkers = size_t(env.world_size);
  store_options.waitWorkers = false;  // the sequence exchange names who is missing
  store_options.timeout = impl->timeout;
  try {
    impl->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
  } catch (const std::exception& e) {  // c10::Error, or c10d's socket errors
    const std::string why = firstLine(e.what());
    if (env.hostsStore()) {
      throw RuntimeFailure(fmt::format("rank 0 cannot host the rendezvous store on {}:{}: {}",
                                       env.master_addr, env.master_port, why));
    }
    throw PeerFailure(fmt::format(
        "rank {}: could not reach the rendezvous store at {}:{} within {:.0f} s: {} never "
        "started, failed, or MASTER_ADDR/MASTER_PORT are wrong ({})",
        env.rank, env.master_addr, env.master_port, options.comm_timeout_s,
        env.agent_store ? "the launcher's agent" : "rank 0, which hosts it,", why));
  }
  return std::shared_ptr<RankSession>(new RankSession(std::move(impl)));
}

int RankSession::rank() const { return impl_->rank(); }
int RankSession::worldSize() const { return impl_->world(); }

void RankSession::prepare(const core::Graph& graph, const std::vector<core::NodeId>& ops) {
  Impl& s = *impl_;
  s.phase = "the collective-sequence check";
  s.sequence = collectiveSequence(graph, ops);
  for (size_t i = 0; i < s.sequence.size(); ++i) s.step_of_node[s.sequence[i].node] = i;
  s.set("sequence", sequenceToText(s.sequence));
  s.awaitRanks("sequence", s.allRanks(), "the collective-sequence check");
  std::vector<std::vector<CollectiveStep>> by_rank;
  std::set<comm::Collective> kinds{comm::Collective::kWait};
  for (int r = 0; r < s.world(); ++r) {
    by_rank.push_back(sequenceFromText(s.get(key("sequence", r)),
                                       fmt::format("rank {}", r)));
    for (const CollectiveStep& step : by_rank.back()) {
      if (const comm::CollectiveInfo* info = comm::findCollective(step.name)) {
        kinds.insert(info->kind);
      }
    }
  }
  // Every rank sees the same sequences; with the same trace everywhere
  // there is nothing to compare.
  if (!s.options.same_trace) {
    if (std::string why = firstSequenceMismatch(by_rank); !why.empty()) {
      throw InputError("collective sequences differ between ranks: " + why +
                       "; the traces are not of one job (replaying them would deadlock)");
    }
    // Records that contradict the ranks' places (a copied trace) would fail
    // or hang the backend: matching throws InputError naming rank and op.
    core::comm::matchAcrossRanks(by_rank);
  }

  s.phase = "process-group creation";
  s.groups = std::make_shared<comm::CommGroups>();
  s.groups->layout = {s.rank(), s.world(), s.options.same_trace};
  s.groups->world = s.makeGroup("tracetwin/pg/world/", s.rank(), s.world());
  for (const comm::RecordedGroup& g : comm::groupsToCreate(graph, ops, s.groups->layout)) {
    const int group_rank =
        int(std::find(g.ranks.begin(), g.ranks.end(), s.rank()) - g.ranks.begin());
    s.groups->named.emplace(g.name, s.makeGroup("tracetwin/pg/" + g.name + "/", group_rank,
                                                int(g.ranks.size())));
  }
  s.phase = "the probe of the backend's collectives";
  s.comm = comm::CommReplayer::createDistributed(s.groups, kinds);
  s.comm->setObserver(&s);
  if (!s.options.same_trace) {
    // PyTorch 1.13's Gloo all_to_all_single records no split sizes: derive
    // them from the peers' send sizes (core/comm/collective_sequence.h).
    const auto elements = [&](core::NodeId id, int64_t bytes) {
      int64_t itemsize = 0;
      for (const core::Value& v : graph.node(id).inputs) {
        core::forEachTensor(v, [&](const core::TensorValue& t) {
          if (itemsize == 0 && t.itemsize > 0) itemsize = t.itemsize;
        });
      }
      return bytes / std::max<int64_t>(itemsize, 1);
    };
    for (auto& [node, d] : core::comm::deriveAllToAllSplits(by_rank, s.rank(), elements)) {
      s.comm->setSplitSizes(node, std::move(d.in_split), std::move(d.out_split));
    }
  }
  const int cuda = device::cudaIndexFromDevice(s.options.device);
  s.device_marks = cuda >= 0;
  if (s.device_marks) s.clock = device::makeCudaEventMarkClock(cuda);
  s.phase = "the replay";
}

comm::CommReplayer& RankSession::commReplayer() {
  if (!impl_->comm) throw RuntimeFailure("RankSession: commReplayer() before prepare()");
  return *impl_->comm;
}

bool RankSession::beginIteration(bool stop_here) {
  Impl& s = *impl_;
  s.phase = "the barrier before an iteration";
  // A rank that stops posts it before the barrier and every rank reads it
  // after, so all see the same answer; keyed by iteration, so a rank that
  // runs ahead (no collectives) cannot post for one its peers already began.
  const std::string stop_key = key("stop", s.iterations_begun++);
  if (stop_here) s.onStore([&] { s.store->set(stop_key, bytesOf("1")); });
  try {
    s.groups->world.group->barrier(c10d::BarrierOptions{})->wait();
  } catch (const c10::Error& e) {
    throw RuntimeFailure(firstLine(e.what_without_backtrace()));  // explained by the caller
  } catch (const std::exception& e) {  // gloo::IoException: a peer is gone
    throw RuntimeFailure(firstLine(e.what()));
  }
  if (s.has(stop_key)) return true;
  s.phase = "the replay";
  {
    std::lock_guard<std::mutex> lock(s.calls_mutex);
    s.calls.clear();
  }
  if (s.device_marks) s.clock->origin();
  s.origin_at = Clock::now();
  s.origin_us = std::chrono::duration<double, std::micro>(s.origin_at.time_since_epoch()).count();
  return false;
}

void RankSession::endIteration(bool measured, double iteration_ms) {
  Impl& s = *impl_;
  if (!measured) return;
  std::vector<size_t> steps;
  std::vector<CallMarks> marks = s.iterationMarks(steps);
  if (s.times.calls.empty()) {
    s.call_steps = steps;
  } else if (steps != s.call_steps) {
    throw RuntimeFailure(fmt::format("rank {}: an iteration issued other collectives than the "
                                     "first measured one",
                                     s.rank()));
  }
  s.times.calls.push_back(std::move(marks));
  s.times.iterations_ms.push_back(iteration_ms);
  s.times.origin_us.push_back(s.origin_us);
}

DistributedSummary RankSession::finish() {
  Impl& s = *impl_;
  s.phase = "the exchange of collective times";
  s.times.call_groups.clear();
  s.times.host = clockId();
  for (size_t step : s.call_steps) {
    s.times.call_groups.push_back(step < s.sequence.size() ? s.sequence[step].group : "");
  }
  s.set("times", rankTimesToText(s.times));
  s.awaitRanks("times", s.allRanks(), "the exchange of collective times");
  std::vector<RankTimes> all;
  for (int r = 0; r < s.world(); ++r) {
    all.push_back(
        rankTimesFromText(s.get(key("times", r)), fmt::format("rank {}", r)));
  }
  const StepTimes split = splitWaits(all);
  DistributedSummary d;
  d.rank = s.rank();
  d.world_size = s.world();
  d.local_rank = s.options.env.local_rank;
  d.launcher = s.options.env.launcher;
  d.backend = s.comm ? s.comm->backendName() : "";
  d.host = hostName();
  d.notes = s.comm ? s.comm->backendNotes() : std::vector<std::string>{};
  d.step_ms = split.step_ms;
  d.step_ms_median = split.step_ms_median;
  d.step_ms_mean = split.step_ms_mean;
  d.straggler = split.straggler;
  const RankSplit& mine = split.ranks.at(size_t(s.rank()));
  d.comm_ops = int(s.call_steps.size());
  d.comm_ms = mine.comm_ms;
  d.wait_ms = mine.wait_ms;
  d.transfer_ms = mine.transfer_ms;
  d.wait_mean_ms = mine.wait_mean_ms;
  d.transfer_mean_ms = mine.transfer_mean_ms;
  for (size_t c = 0; c < s.call_steps.size(); ++c) {
    CollectiveTiming t;
    if (s.call_steps[c] < s.sequence.size()) {
      const CollectiveStep& step = s.sequence[s.call_steps[c]];
      t.id = step.node;
      t.name = step.name;
      t.group = step.group;
      t.bytes = step.bytes;
    }
    t.wait_us = mine.calls[c].wait_us;
    t.transfer_us = mine.calls[c].transfer_us;
    t.wait_mean_us = mine.calls[c].wait_mean_us;
    t.transfer_mean_us = mine.calls[c].transfer_mean_us;
    d.collectives.push_back(std::move(t));
  }
  s.phase = "the gathering of reports";
  return d;
}

std::vector<std::string> RankSession::gatherReports(const std::string& mine) {
  Impl& s = *impl_;
  s.set("report", mine);
  if (s.rank() != 0) return {};
  s.awaitRanks("report", s.allRanks(), "the gathering of reports");
  std::vector<std::string> out;
  for (int r = 0; r < s.world(); ++r) out.push_back(s.get(key("report", r)));
  return out;
}

void RankSession::reportFailure(const std::string& what) noexcept {
  try {
    impl_->set("failed", what);
  } catch (...) {
    // The store went away with rank 0: the peers find out by themselves.
  }
}

std::string RankSession::explainFailure(const std::string& error) noexcept {
  Impl& s = *impl_;
  std::string where = s.phase;
  if (s.in_collective) {
    auto it = s.step_of_node.find(s.in_collective->id);
    where = fmt::format("collective #{} of {} ({}, op {})",
                        it == s.step_of_node.end() ? 0 : it->second, s.sequence.size(),
                        it == s.step_of_node.end() ? s.in_collective->name.str() : s.sequence[it->second].name,
                        s.in_collective->id);
  }
  std::string out = fmt::format("rank {}: failed in {}: {}", s.rank(), where, firstLine(error));
  try {
    s.set("failed", fmt::format("failed in {}: {}", where, firstLine(error)));
    std::vector<int> silent;
    std::vector<std::string> reported;
    const auto until = Clock::now() + kListenForPeers;
    for (;;) {
      silent.clear();
      reported.clear();
      for (int r = 0; r < s.world(); ++r) {
        if (r == s.rank()) continue;
        if (s.store->check({key("failed", r)})) {
          reported.push_back(
              fmt::format("rank {} {}", r, firstLine(textOf(s.store->get(key("failed", r))))));
        } else if (!s.store->check({key("report", r)})) {
          silent.push_back(r);
        }
      }
      if (silent.empty() || Clock::now() > until) break;
      std::this_thread::sleep_for(kPoll);
    }
    for (const std::string& r : reported) out += "; " + r;
    if (!silent.empty()) {
      out += fmt::format("; rank(s) {} sent no word: they died, hang, or never started",
                         fmt::join(silent, ", "));
    }
  } catch (...) {
    out += fmt::format("; the rendezvous store ({}:{}, hosted by {}) is unreachable: {} is gone",
                       s.options.env.master_addr, s.options.env.master_port,
                       s.options.env.agent_store ? "the launcher" : "rank 0",
                       s.options.env.agent_store ? "the launcher" : "rank 0");
  }
  return out;
}

}  // namespace tracetwin::replay::dist
