#include "timeline/sources.h"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "core/op_family.h"

namespace tracetwin::timeline {
namespace {

std::string cpuTrackName(int64_t tid, const char* what) {
  return fmt::format("CPU thread {}{}", tid, what);
}
std::string streamName(int64_t stream, const char* what) {
  return fmt::format("stream {}{}", stream, what);
}

std::string familyOf(const core::Graph& graph, core::NodeId id) {
  const core::Node* n = graph.findNode(id);
  return n != nullptr ? core::opFamily(*n) : std::string();
}

}  // namespace

View originalView(const core::Graph& graph, const core::kineto::LinkedTimeline& linked,
                  const std::string& kineto, int rank) {
  View v;
  v.source = "original";
  v.rank = rank;
  v.detail = fmt::format("Kineto trace {}, {} of {} ops linked ({}), iteration: {}",
                         std::filesystem::path(kineto).filename().string(), linked.matched_ops,
                         linked.top_level_ops, linked.method, linked.iteration_source);
  v.iteration_us = linked.iteration_ms * 1000.0;
  const double origin = linked.iteration_start_us;
  auto addKernel = [&](const core::kineto::LinkedKernel& k, core::NodeId node,
                       const std::string& owner) {
    Slice s;
    s.name = k.name;
    s.category = core::kineto::eventCategoryName(k.category);
    s.start_us = k.start_us - origin;
    s.dur_us = k.duration_us;
    s.node = node;
    s.args = {{"op", owner}, {"correlation", k.correlation}};
    if (!k.launch_api.empty()) s.args["launched_by"] = k.launch_api;
    v.track(Track::Kind::kDevice, k.stream, streamName(k.stream, ""))
        .slices.push_back(std::move(s));
  };
  for (const core::kineto::LinkedOp& op : linked.ops) {
    if (!op.matched) continue;
    Slice s;
    s.name = op.name;
    s.category = "cpu_op";
    s.start_us = op.start_us - origin;
    s.dur_us = op.duration_us;
    s.node = op.id;
    s.family = familyOf(graph, op.id);
    s.args = {{"kernels", op.kernels.size()}, {"device_us", op.device_us}};
    v.track(Track::Kind::kCpu, op.kineto_tid, cpuTrackName(op.kineto_tid, ""))
        .slices.push_back(std::move(s));
    for (const auto& k : op.kernels) addKernel(k, op.id, op.name);
  }
  for (const core::kineto::LabelKernels& label : linked.labels) {
    for (const auto& k : label.kernels) addKernel(k, label.id, label.name);
  }
  // Ops the linker placed before the iteration (other steps' leftovers) are
  // not part of it.
  for (Track& t : v.tracks) {
    t.slices.erase(std::remove_if(t.slices.begin(), t.slices.end(),
                                  [](const Slice& s) { return s.start_us < 0; }),
                   t.slices.end());
  }
  return v;
}

View predictionView(const predictors::Prediction& p,
                    const std::unordered_map<core::NodeId, Measured>* measured, int rank) {
  View v;
  v.source = "prediction";
  v.rank = rank;
  v.detail = fmt::format("predicted for {}: {:.3f} ms, critical-path simulation", p.device,
                         p.iteration_ms);
  v.iteration_us = p.iteration_ms * 1000.0;
  std::map<core::NodeId, const predictors::OpPrediction*> by_id;
  for (const auto& o : p.per_op) by_id[o.id] = &o;
  // Kernels of a stream in start order, to draw the idle time a held-back
  // kernel waited on its stream.
  std::map<int64_t, std::vector<std::pair<const predictors::ScheduledOp*, size_t>>> on_stream;
  for (const predictors::ScheduledOp& op : p.schedule) {
    const predictors::OpPrediction& o = *by_id.at(op.id);
    Slice s;
    s.name = o.name;
    s.category = "cpu_op";
    s.start_us = op.times.cpu_start_us;
    s.dur_us = op.times.cpu_end_us - op.times.cpu_start_us;
    s.node = op.id;
    s.family = o.family;
    s.args = {{"model", o.model}, {"predicted_us", o.predicted_us}, {"cpu_us", o.cpu_us}};
    if (measured != nullptr) {
      auto m = measured->find(op.id);
      if (m != measured->end()) {
        s.args["replay_us"] = m->second.us;
        if (m->second.us > 0)
          s.args["error_pct"] = 100.0 * (o.predicted_us - m->second.us) / m->second.us;
      }
    }
    Track& cpu = v.track(Track::Kind::kCpu, op.thread, cpuTrackName(op.thread, " (simulated)"));
    cpu.slices.push_back(std::move(s));
    if (op.times.sync_wait_from_us >= 0) {
      Slice w;
      w.name = "wait";
      w.category = "wait";
      w.start_us = op.times.sync_wait_from_us;
      w.dur_us = op.times.cpu_end_us - op.times.sync_wait_from_us;
      w.node = op.id;
      w.args = {{"for", fmt::format("stream {}", op.stream)}, {"op", o.name}};
      cpu.slices.push_back(std::move(w));
    }
    for (size_t k = 0; k < op.times.kernels.size(); ++k) on_stream[op.stream].push_back({&op, k});
  }
  for (auto& [stream, kernels] : on_stream) {
    std::stable_sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) {
      return a.first->times.kernels[a.second].start_us < b.first->times.kernels[b.second].start_us;
    });
    Track& t = v.track(Track::Kind::kDevice, stream, streamName(stream, " (simulated)"));
    double free = 0;  // when the stream's previous kernel ended
    for (const auto& [op, k] : kernels) {
      const predictors::SimKernel& kernel = op->times.kernels[k];
      const predictors::OpPrediction& o = *by_id.at(op->id);
      const bool waited = kernel.waited_for == predictors::SimWait::kDependency ||
                          kernel.waited_for == predictors::SimWait::kRanks;
      const double idle_from = std::max(kernel.launch_us, free);
      if (waited && kernel.start_us > idle_from) {
        Slice w;
        w.name = "wait";
        w.category = "wait";
        w.start_us = idle_from;
        w.dur_us = kernel.start_us - idle_from;
        w.node = op->id;
        w.args = {{"for", kernel.waited_for == predictors::SimWait::kRanks
                              ? std::string("the other ranks")
                              : std::string("another stream")},
                  {"op", o.name}};
        t.slices.push_back(std::move(w));
      }
      Slice s;
      s.name = o.name;
      s.category = o.family == "comm" ? "collective" : "kernel";
      s.start_us = kernel.start_us;
      s.dur_us = kernel.end_us - kernel.start_us;
      s.node = op->id;
      s.family = o.family;
      s.args = {{"kernel", fmt::format("{} of {}", k + 1, op->times.kernels.size())},
                {"launched_at_us", kernel.launch_us},
                {"model", o.model}};
      t.slices.push_back(std::move(s));
      free = kernel.end_us;
    }
  }
  return v;
}

Timeline ranksTimeline(const predictors::MultiRankPrediction& m,
                       std::vector<std::optional<View>> originals) {
  Timeline t;
  std::vector<size_t> prediction_view(m.ranks.size());
  for (size_t r = 0; r < m.ranks.size(); ++r) {
    if (r < originals.size() && originals[r]) t.views.push_back(std::move(*originals[r]));
    prediction_view[r] = t.views.size();
    t.views.push_back(predictionView(m.ranks[r].prediction, nullptr, int(r)));
  }
  for (const predictors::CollectiveReport& c : m.collectives) {
    CollectiveLink link;
    link.name = fmt::format("{} #{} ({} group)", c.name, c.position,
                            c.group.empty() ? "default" : c.group);
    for (size_t k = 0; k < c.members.size() && k < c.nodes.size(); ++k) {
      if (size_t(c.members[k]) >= prediction_view.size()) continue;
      if (c.members[k] == c.last_rank) link.last = link.members.size();
      link.members.push_back({prediction_view[size_t(c.members[k])], c.nodes[k]});
    }
    t.collectives.push_back(std::move(link));
  }
  return t;
}

}  // namespace tracetwin::timeline
