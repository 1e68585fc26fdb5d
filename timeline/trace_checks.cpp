#include "timeline/trace_checks.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include <map>
#include <utility>

namespace tracetwin::timeline {
namespace {

using nlohmann::json;
using TrackKey = std::pair<int64_t, int64_t>;  // (pid, tid)

// Times are written with nanosecond resolution.
constexpr double kSlack = 1e-3;

struct Span {
  double start, end;
  int64_t node;  // args.et_node, -1 without one
  bool collective;  // "cat": "collective", or a CPU op of family comm
};

class Checker {
 public:
  explicit Checker(const CheckOptions& options) : options_(options) {}

  std::vector<std::string> run(const json& doc) {
    if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array()) {
      problem("the document is not an object with a \"traceEvents\" array");
      return problems_;
    }
    const json& events = doc["traceEvents"];
    for (size_t i = 0; i < events.size(); ++i) event(i, events[i]);
    finish();
    return problems_;
  }

 private:
  void problem(std::string text) {
    if (problems_.size() < 50) problems_.push_back(std::move(text));
  }

  static bool isInt(const json& e, const char* key) {
    return e.contains(key) && e[key].is_number_integer();
  }
  static bool isNumber(const json& e, const char* key) {
    return e.contains(key) && e[key].is_number();
  }

  void event(size_t i, const json& e) {
    if (!e.is_object() || !e.contains("ph") || !e["ph"].is_string()) {
      problem(fmt::format("event {}: no \"ph\" string", i));
      return;
    }
    const std::string ph = e["ph"];
    if (!isInt(e, "pid") || !isInt(e, "tid")) {
      problem(fmt::format("event {} ({}): pid and tid must be integers", i, ph));
      return;
    }
    const TrackKey track{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()};
    if (ph == "M") return meta(i, e, track);
    if (ph == "X") return slice(i, e, track);
    if (ph == "s" || ph == "f") return flow(i, e, track, ph);
    problem(fmt::format("event {}: unknown phase \"{}\"", i, ph));
  }

  void meta(size_t i, const json& e, const TrackKey& track) {
    const std::string name = e.value("name", "");
    const json args = e.value("args", json::object());
    if (name == "process_name" || name == "thread_name" || name == "process_labels") {
      const char* key = name == "process_labels" ? "labels" : "name";
      if (!args.contains(key) || !args[key].is_string()) {
        problem(fmt::format("event {}: {} without args.{}", i, name, key));
        return;
      }
      if (name == "process_name") named_processes_.insert(track.first);
      if (name == "thread_name") named_threads_.insert(track);
    } else if (name == "process_sort_index" || name == "thread_sort_index") {
      if (!args.contains("sort_index") || !args["sort_index"].is_number_integer())
        problem(fmt::format("event {}: {} without an integer args.sort_index", i, name));
    } else {
      problem(fmt::format("event {}: unknown metadata \"{}\"", i, name));
    }
  }

  void slice(size_t i, const json& e, const TrackKey& track) {
    if (!e.contains("name") || !e["name"].is_string()) {
      problem(fmt::format("event {}: a slice without a name", i));
      return;
    }
    if (!isNumber(e, "ts") || !isNumber(e, "dur")) {
      problem(fmt::format("event {} (\"{}\"): ts and dur must be numbers", i,
                          e["name"].get<std::string>()));
      return;
    }
    const double ts = e["ts"], dur = e["dur"];
    if (ts < 0 || dur < 0) {
      problem(fmt::format("event {} (\"{}\"): ts {} and dur {} must be >= 0", i,
                          e["name"].get<std::string>(), ts, dur));
      return;
    }
    std::vector<Span>& spans = slices_[track];
    if (!spans.empty() && ts + kSlack < spans.back().start) {
      problem(fmt::format(
          "event {} (\"{}\") on pid {} tid {}: starts at {} before the slice "
          "before it ({}): not sorted",
          i, e["name"].get<std::string>(), track.first, track.second, ts, spans.back().start));
    }
    // Nesting: pop what ended before this slice; what is left encloses it.
    std::vector<double>& open = open_[track];
    while (!open.empty() && open.back() <= ts + kSlack) open.pop_back();
    if (!open.empty() && ts + dur > open.back() + kSlack) {
      problem(fmt::format(
          "event {} (\"{}\") on pid {} tid {}: [{}, {}] overlaps its parent, "
          "which ends at {}: slices must nest",
          i, e["name"].get<std::string>(), track.first, track.second, ts, ts + dur, open.back()));
    }
    open.push_back(ts + dur);
    const json args = e.value("args", json::object());
    spans.push_back({ts, ts + dur,
                     args.contains("et_node") && args["et_node"].is_number_integer()
                         ? args["et_node"].get<int64_t>()
                         : -1,
                     e.value("cat", "") == "collective" || args.value("family", "") == "comm"});
    if (options_.nodes != nullptr && args.contains("et_node")) {
      const json& id = args["et_node"];
      if (!id.is_number_integer() || !options_.nodes->count(id.get<int64_t>()))
        problem(fmt::format("event {} (\"{}\"): et_node {} is not a node of the trace", i,
                            e["name"].get<std::string>(), id.dump()));
    }
  }

  void flow(size_t i, const json& e, const TrackKey& track, const std::string& ph) {
    if (!e.contains("id") || !isNumber(e, "ts")) {
      problem(fmt::format("event {}: a flow event without id and ts", i));
      return;
    }
    if (ph == "f" && e.value("bp", "") != "e") {
      problem(
          fmt::format("event {}: a flow end without \"bp\": \"e\" (binds to the next slice)", i));
    }
    Flow& f = flows_[e["id"].dump()];
    (ph == "s" ? f.starts : f.ends) += 1;
    f.between_ranks = e.value("cat", "") == "collective";
    f.points.push_back({track, e["ts"].get<double>(), i});
  }

  void finish() {
    for (const auto& [track, spans] : slices_) {
      if (!named_processes_.count(track.first))
        problem(fmt::format("pid {} has slices but no process_name", track.first));
      if (!named_threads_.count(track))
        problem(
            fmt::format("pid {} tid {} has slices but no thread_name", track.first, track.second));
    }
    for (const auto& [id, f] : flows_) {
      if (f.starts != 1 || f.ends != 1) {
        problem(fmt::format("flow {}: {} start(s) and {} end(s); expected one of each", id,
                            f.starts, f.ends));
      }
      std::set<int64_t> nodes;
      bool all_collectives = true;
      for (const Point& p : f.points) {
        const Span* s = innermost(p);
        if (s == nullptr) {
          problem(fmt::format("event {} (flow {}) at {} on pid {} tid {} is inside no slice",
                              p.event, id, p.ts, p.track.first, p.track.second));
        } else {
          nodes.insert(s->node);
          all_collectives = all_collectives && s->collective;
        }
      }
      // An arrow between ranks links one collective's members: each end
      // binds to a collective (their node ids are each rank's own).
      if (f.between_ranks) {
        if (!all_collectives)
          problem(fmt::format("flow {} (\"collective\") binds a slice that is no collective", id));
        continue;
      }
      // An arrow links an op to its own kernel: both ends bind to slices of
      // one node.
      if (nodes.size() > 1) {
        problem(fmt::format("flow {} binds slices of different nodes ({})", id,
                            fmt::join(nodes, ", ")));
      }
    }
  }

  struct Point {
    TrackKey track;
    double ts;
    size_t event;
  };
  struct Flow {
    int starts = 0, ends = 0;
    bool between_ranks = false;  // "cat": "collective": members of one collective
    std::vector<Point> points;
  };

  // The slice a flow point binds to: the innermost one around it (slices
  // are in start order and nest, so the last that contains it).
  const Span* innermost(const Point& p) const {
    auto it = slices_.find(p.track);
    if (it == slices_.end()) return nullptr;
    const Span* found = nullptr;
    for (const Span& s : it->second)
      if (s.start - kSlack <= p.ts && p.ts <= s.end + kSlack) found = &s;
    return found;
  }

  const CheckOptions& options_;
  std::vector<std::string> problems_;
  std::map<TrackKey, std::vector<Span>> slices_;
  std::map<TrackKey, std::vector<double>> open_;
  std::set<int64_t> named_processes_;
  std::set<TrackKey> named_threads_;
  std::map<std::string, Flow> flows_;
};

}  // namespace

std::vector<std::string> checkTraceEvents(const nlohmann::json& doc, const CheckOptions& options) {
  return Checker(options).run(doc);
}

}  // namespace tracetwin::timeline
