#include "timeline/trace_events.h"

#include <fmt/core.h>
#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>

#include "core/errors.h"
#include "core/input_files.h"
#include "core/text.h"

namespace tracetwin::timeline {
namespace {

using nlohmann::json;

// Nanosecond resolution: the trace-event format's microseconds with three
// decimals, and a shortest-form double prints no more digits than that.
double roundNs(double us) { return std::round(us * 1000.0) / 1000.0; }

// Views of one rank sit together: original, replay, prediction.
int sourceOrder(const std::string& source) {
  if (source == "original") return 0;
  if (source == "replay") return 1;
  if (source == "prediction") return 2;
  return 3;
}

json metadata(const char* what, int pid, int tid, json args) {
  return {{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

std::string processName(const View& v) {
  return v.rank >= 0 ? fmt::format("rank {} · {}", v.rank, v.source) : v.source;
}

// Sorted by start (longer first on ties), partial overlaps cut at the
// enclosing slice's end. Compared in whole nanoseconds: a wait that ends
// with its op must not come out a float's width past it.
std::vector<Slice> nested(std::vector<Slice> slices, int64_t* clipped) {
  struct Ns {
    int64_t start, end;
  };
  std::vector<std::pair<Ns, size_t>> order;
  order.reserve(slices.size());
  for (size_t i = 0; i < slices.size(); ++i) {
    const Slice& s = slices[i];
    const int64_t start = std::llround(s.start_us * 1000.0);
    const int64_t end =
        std::max<int64_t>(start, std::llround((s.start_us + std::max(s.dur_us, 0.0)) * 1000.0));
    order.push_back({{start, end}, i});
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.first.start != b.first.start
               ? a.first.start < b.first.start
               : a.first.end - a.first.start > b.first.end - b.first.start;
  });
  std::vector<Slice> out;
  out.reserve(slices.size());
  std::vector<int64_t> open_ends;  // ends of the slices enclosing the current one
  for (auto& [ns, i] : order) {
    while (!open_ends.empty() && open_ends.back() <= ns.start) open_ends.pop_back();
    Slice& s = out.emplace_back(std::move(slices[i]));
    if (!open_ends.empty() && ns.end > open_ends.back()) {
      s.args["clipped_us"] = double(ns.end - open_ends.back()) / 1000.0;
      ns.end = open_ends.back();
      ++*clipped;
    }
    s.start_us = double(ns.start) / 1000.0;
    s.dur_us = double(ns.end - ns.start) / 1000.0;
    open_ends.push_back(ns.end);
  }
  return out;
}

// Where a flow leaves an op: inside the op but in none of its children (a
// flow binds to the innermost slice around it), in the first such gap.
double flowPoint(const std::vector<Slice>& track, size_t i) {
  const Slice& s = track[i];
  const double end = s.start_us + s.dur_us;
  double from = s.start_us;
  size_t j = i + 1;
  for (; j < track.size() && track[j].start_us < end; ++j) {
    if (track[j].start_us > from) break;
    from = std::max(from, track[j].start_us + track[j].dur_us);
  }
  const double to = j < track.size() && track[j].start_us < end ? track[j].start_us : end;
  return roundNs(to > from ? (from + to) / 2 : s.start_us + s.dur_us / 2);
}

json sliceEvent(const Slice& s, int pid, int tid) {
  json args = s.args;
  if (s.node != core::kNoNode) args["et_node"] = s.node;
  if (!s.family.empty()) args["family"] = s.family;
  return {{"ph", "X"},  {"cat", s.category}, {"name", s.name},  {"pid", pid},
          {"tid", tid}, {"ts", s.start_us},  {"dur", s.dur_us}, {"args", std::move(args)}};
}

struct Placed {
  int pid, tid;
  const Slice* slice;
  double flow_ts;  // where a flow to or from it binds
};

}  // namespace

Track& View::track(Track::Kind kind, int64_t id, const std::string& name) {
  for (Track& t : tracks)
    if (t.kind == kind && t.id == id) return t;
  Track& t = tracks.emplace_back();
  t.kind = kind;
  t.id = id;
  t.name = name;
  return t;
}

json toTraceEvents(const Timeline& timeline, WriteInfo* info) {
  WriteInfo local;
  WriteInfo& w = info != nullptr ? *info : local;
  json events = json::array();
  json flows = json::array();
  int64_t flow_id = 0;
  // Per view: where each op's collective slice sits (its stream's, else its
  // CPU slice on a CPU device), for the arrows between ranks.
  std::vector<std::map<core::NodeId, Placed>> collective_at(timeline.views.size());
  for (size_t v = 0; v < timeline.views.size(); ++v) {
    const View& view = timeline.views[v];
    const int pid = int(v) + 1;
    events.push_back(metadata("process_name", pid, 0, {{"name", processName(view)}}));
    events.push_back(metadata("process_sort_index", pid, 0,
                              {{"sort_index", (view.rank + 1) * 10 + sourceOrder(view.source)}}));
    if (!view.detail.empty())
      events.push_back(metadata("process_labels", pid, 0, {{"labels", view.detail}}));
    // Threads: CPU tracks first, then streams, each by id; tids are the
    // track's place (a Kineto thread id and a stream number may be equal).
    std::vector<const Track*> order;
    for (const Track& t : view.tracks) order.push_back(&t);
    std::stable_sort(order.begin(), order.end(), [](const Track* a, const Track* b) {
      return a->kind != b->kind ? a->kind == Track::Kind::kCpu : a->id < b->id;
    });
    std::map<core::NodeId, Placed> op_slices;  // the op's slice on a CPU track
    std::vector<Placed> device_slices;
    std::vector<std::vector<Slice>> kept(order.size());
    for (size_t k = 0; k < order.size(); ++k) {
      const int tid = int(k) + 1;
      events.push_back(metadata("thread_name", pid, tid, {{"name", order[k]->name}}));
      events.push_back(metadata("thread_sort_index", pid, tid, {{"sort_index", tid}}));
      kept[k] = nested(order[k]->slices, &w.clipped);
      for (size_t i = 0; i < kept[k].size(); ++i) {
        const Slice& s = kept[k][i];
        events.push_back(sliceEvent(s, pid, tid));
        ++w.slices;
        if (s.node == core::kNoNode || s.category == "wait" || s.dur_us <= 0) continue;
        const Placed placed{pid, tid, nullptr, flowPoint(kept[k], i)};
        if (order[k]->kind == Track::Kind::kCpu) {
          op_slices.emplace(s.node, Placed{pid, tid, &s, placed.flow_ts});
          if (s.family == "comm") collective_at[v].emplace(s.node, placed);
        } else {
          device_slices.push_back(Placed{pid, tid, &s, placed.flow_ts});
          // A device's collective replaces its CPU call as the arrow's end.
          if (s.category == "collective") collective_at[v][s.node] = placed;
        }
      }
    }
    // Flow arrows op -> kernel, bound inside each slice and away from its
    // ends (an end shared with a neighbour would bind to either).
    for (const Placed& d : device_slices) {
      auto op = op_slices.find(d.slice->node);
      if (op == op_slices.end()) continue;
      const json id = ++flow_id;
      flows.push_back({{"ph", "s"},
                       {"cat", "launch"},
                       {"name", "launch"},
                       {"id", id},
                       {"pid", op->second.pid},
                       {"tid", op->second.tid},
                       {"ts", op->second.flow_ts}});
      flows.push_back({{"ph", "f"},
                       {"bp", "e"},
                       {"cat", "launch"},
                       {"name", "launch"},
                       {"id", id},
                       {"pid", d.pid},
                       {"tid", d.tid},
                       {"ts", d.flow_ts}});
      ++w.flows;
    }
  }
  // Arrows between ranks: from each member that waited to the last to
  // arrive (their transfers end together; the wait slice precedes each).
  for (const CollectiveLink& link : timeline.collectives) {
    if (link.last >= link.members.size()) continue;
    auto at = [&](const CollectiveLink::Member& m) -> const Placed* {
      if (m.view >= collective_at.size()) return nullptr;
      auto it = collective_at[m.view].find(m.node);
      return it == collective_at[m.view].end() ? nullptr : &it->second;
    };
    const Placed* last = at(link.members[link.last]);
    if (last == nullptr) continue;
    for (size_t k = 0; k < link.members.size(); ++k) {
      const Placed* from = k == link.last ? nullptr : at(link.members[k]);
      if (from == nullptr) continue;
      const json id = ++flow_id;
      flows.push_back({{"ph", "s"},
                       {"cat", "collective"},
                       {"name", link.name},
                       {"id", id},
                       {"pid", from->pid},
                       {"tid", from->tid},
                       {"ts", from->flow_ts}});
      flows.push_back({{"ph", "f"},
                       {"bp", "e"},
                       {"cat", "collective"},
                       {"name", link.name},
                       {"id", id},
                       {"pid", last->pid},
                       {"tid", last->tid},
                       {"ts", last->flow_ts}});
      ++w.flows;
    }
  }
  for (json& f : flows) events.push_back(std::move(f));
  json other = json::object();
  for (const View& v : timeline.views) {
    other[processName(v)] = {{"iteration_ms", v.iteration_us / 1000.0}, {"detail", v.detail}};
  }
  json data = {{"tracetwin", "timeline of one iteration (docs/timeline.md)"},
               {"views", std::move(other)}};
  if (!timeline.notes.empty()) data["notes"] = timeline.notes;
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}, {"otherData", data}};
}

WriteInfo writeTimeline(const std::string& path, const Timeline& timeline) {
  WriteInfo info;
  const std::string text =
      toTraceEvents(timeline, &info).dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  core::refuseOverwritingAnInput(path, "the timeline");
  const bool gz = core::text::hasGzipSuffix(path);
  if (gz) {
    gzFile f = gzopen(path.c_str(), "wb6");
    if (f == nullptr) throw InputError(fmt::format("{}: cannot open for writing", path));
    const int wrote = gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
    const int closed = gzclose(f);
    if (wrote != static_cast<int>(text.size()) || closed != Z_OK)
      throw InputError(fmt::format("{}: write failed", path));
  } else {
    std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
    if (!f) throw InputError(fmt::format("{}: cannot open for writing", path));
    if (std::fwrite(text.data(), 1, text.size(), f.get()) != text.size() ||
        std::fflush(f.get()) != 0)
      throw InputError(fmt::format("{}: write failed", path));
  }
  // Not by opening it again: a FIFO's reader is gone by now (opening hung),
  // and a pipe has no size (ftell gave -1). Through a pipe: the bytes handed
  // to it (before compression for .gz).
  struct stat st {};
  info.bytes = ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)
                   ? static_cast<uint64_t>(st.st_size)
                   : static_cast<uint64_t>(text.size());
  return info;
}

}  // namespace tracetwin::timeline
