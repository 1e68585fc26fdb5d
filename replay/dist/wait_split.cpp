#include "replay/dist/wait_split.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "core/errors.h"
#include "core/intervals.h"
#include "core/statistics.h"

namespace tracetwin::replay::dist {
namespace {

// (group, position in group) of each call of one rank.
std::vector<std::pair<std::string, size_t>> groupPositions(const RankTimes& r) {
  std::map<std::string, size_t> next;
  std::vector<std::pair<std::string, size_t>> out;
  for (const std::string& g : r.call_groups) out.emplace_back(g, next[g]++);
  return out;
}

void checkShapes(const std::vector<RankTimes>& ranks) {
  for (size_t r = 0; r < ranks.size(); ++r) {
    const RankTimes& t = ranks[r];
    if (t.iterations_ms.size() != ranks[0].iterations_ms.size()) {
      throw InputError(fmt::format("rank {} measured {} iterations, rank 0 measured {}", r,
                                   t.iterations_ms.size(), ranks[0].iterations_ms.size()));
    }
    if (t.calls.size() != t.iterations_ms.size()) {
      throw InputError(fmt::format("rank {}: collective marks for {} iterations, expected {}", r,
                                   t.calls.size(), t.iterations_ms.size()));
    }
    for (const auto& it : t.calls) {
      if (it.size() != t.call_groups.size()) {
        throw InputError(fmt::format("rank {}: {} collective calls in an iteration, expected {}",
                                     r, it.size(), t.call_groups.size()));
      }
    }
  }
}

bool sameClock(const RankTimes& a, const RankTimes& b, size_t iteration) {
  return !a.host.empty() && a.host == b.host && iteration < a.origin_us.size() &&
         iteration < b.origin_us.size();
}

}  // namespace

StepTimes splitWaits(const std::vector<RankTimes>& ranks) {
  StepTimes out;
  if (ranks.empty()) return out;
  checkShapes(ranks);
  const size_t iterations = ranks[0].iterations_ms.size();
  std::vector<int> slowest_count(ranks.size(), 0);
  for (size_t i = 0; i < iterations; ++i) {
    size_t slowest = 0;
    for (size_t r = 1; r < ranks.size(); ++r) {
      if (ranks[r].iterations_ms[i] > ranks[slowest].iterations_ms[i]) slowest = r;
    }
    ++slowest_count[slowest];
    out.step_ms.push_back(ranks[slowest].iterations_ms[i]);
  }
  out.step_ms_median = core::median(out.step_ms);
  out.step_ms_mean = core::mean(out.step_ms);
  out.straggler = int(std::max_element(slowest_count.begin(), slowest_count.end()) -
                      slowest_count.begin());

  // Members of each (group, position): the ranks whose call lands there.
  std::vector<std::vector<std::pair<std::string, size_t>>> positions;
  std::map<std::pair<std::string, size_t>, std::vector<std::pair<size_t, size_t>>> members;
  for (size_t r = 0; r < ranks.size(); ++r) {
    positions.push_back(groupPositions(ranks[r]));
    for (size_t c = 0; c < positions[r].size(); ++c) members[positions[r][c]].emplace_back(r, c);
  }
  for (size_t r = 0; r < ranks.size(); ++r) {
    const RankTimes& me = ranks[r];
    const size_t calls = me.call_groups.size();
    std::vector<std::vector<double>> waits(calls), transfers(calls);
    std::vector<double> comm, wait, transfer;
    for (size_t i = 0; i < iterations; ++i) {
      std::vector<std::pair<double, double>> comm_spans, wait_spans, transfer_spans;
      for (size_t c = 0; c < calls; ++c) {
        const CallMarks& mine = me.calls[i][c];
        double last_arrival = mine.arrive_us;
        for (auto [peer, pc] : members.at(positions[r][c])) {
          const double shift = sameClock(me, ranks[peer], i)
                                   ? ranks[peer].origin_us[i] - me.origin_us[i]
                                   : 0.0;
          last_arrival = std::max(last_arrival, ranks[peer].calls[i][pc].arrive_us + shift);
        }
        // A collective ends after its last member arrived: a later arrival
        // is clock skew between hosts, not waiting.
        const double span = std::max(0.0, mine.end_us - mine.arrive_us);
        const double w = std::min(span, last_arrival - mine.arrive_us);
        const double t = span - w;
        waits[c].push_back(w);
        transfers[c].push_back(t);
        comm_spans.emplace_back(mine.arrive_us, mine.arrive_us + span);
        wait_spans.emplace_back(mine.arrive_us, mine.arrive_us + w);
        transfer_spans.emplace_back(mine.arrive_us + w, mine.arrive_us + span);
      }
      comm.push_back(core::unionLength(comm_spans) / 1000.0);
      wait.push_back(core::unionLength(wait_spans) / 1000.0);
      transfer.push_back(core::unionLength(transfer_spans) / 1000.0);
    }
    RankSplit split;
    split.comm_ms = core::median(comm);
    split.wait_ms = core::median(wait);
    split.transfer_ms = core::median(transfer);
    split.wait_mean_ms = core::mean(wait);
    split.transfer_mean_ms = core::mean(transfer);
    for (size_t c = 0; c < calls; ++c) {
      split.calls.push_back({core::median(waits[c]), core::median(transfers[c]),
                             core::mean(waits[c]), core::mean(transfers[c])});
    }
    out.ranks.push_back(std::move(split));
  }
  return out;
}

std::string rankTimesToText(const RankTimes& times) {
  std::string out = fmt::format("{} {} {}\n", times.iterations_ms.size(), times.call_groups.size(),
                                times.host.empty() ? "-" : times.host);
  for (std::string g : times.call_groups) {
    // One word per name: group names only pair calls up, alike on every rank.
    std::replace_if(g.begin(), g.end(), [](char c) { return std::isspace((unsigned char)c); }, '_');
    out += (g.empty() ? "-" : g) + "\n";
  }
  for (size_t i = 0; i < times.iterations_ms.size(); ++i) {
    out += fmt::format("{:.17g} {:.17g}", times.iterations_ms[i],
                       i < times.origin_us.size() ? times.origin_us[i] : 0.0);
    if (i < times.calls.size()) {
      for (const CallMarks& m : times.calls[i]) {
        out += fmt::format(" {:.17g} {:.17g}", m.arrive_us, m.end_us);
      }
    }
    out += "\n";
  }
  return out;
}

RankTimes rankTimesFromText(const std::string& text, const std::string& from) {
  std::istringstream in(text);
  size_t iterations = 0, calls = 0;
  auto bad = [&](const std::string& what) {
    return InputError(fmt::format("{}: collective times: {}", from, what));
  };
  RankTimes t;
  if (!(in >> iterations >> calls >> t.host)) throw bad("expected 'iterations calls host' first");
  if (t.host == "-") t.host.clear();
  for (size_t c = 0; c < calls; ++c) {
    std::string g;
    if (!(in >> g)) throw bad(fmt::format("expected {} group names", calls));
    t.call_groups.push_back(g == "-" ? "" : g);
  }
  for (size_t i = 0; i < iterations; ++i) {
    double ms = 0, origin = 0;
    if (!(in >> ms >> origin)) throw bad(fmt::format("expected {} iterations", iterations));
    t.iterations_ms.push_back(ms);
    t.origin_us.push_back(origin);
    auto& marks = t.calls.emplace_back();
    for (size_t c = 0; c < calls; ++c) {
      CallMarks m;
      if (!(in >> m.arrive_us >> m.end_us)) {
        throw bad(fmt::format("iteration {}: expected {} arrive/end pairs", i, calls));
      }
      marks.push_back(m);
    }
  }
  return t;
}

}  // namespace tracetwin::replay::dist
