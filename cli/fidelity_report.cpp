#include "cli/fidelity_report.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

#include "core/op_family.h"

namespace tracetwin::cli {
namespace {

using core::kineto::LinkedOp;
using core::kineto::LinkedTimeline;

double ratio(double replayed, double original) { return original > 0 ? replayed / original : 0.0; }

void finishRow(FidelityFamilyRow& row) {
  row.cpu_ratio = ratio(row.replay_cpu_ms, row.original_cpu_ms);
  row.device_ratio = ratio(row.replay_device_ms, row.original_device_ms);
  row.host_ratio = ratio(row.replay_host_ms, row.original_host_ms);
}

nlohmann::json rowJson(const FidelityFamilyRow& r) {
  return {{"family", r.family},
          {"ops", r.ops},
          {"original_cpu_ms", r.original_cpu_ms},
          {"replay_cpu_ms", r.replay_cpu_ms},
          {"cpu_ratio", r.cpu_ratio},
          {"original_device_ms", r.original_device_ms},
          {"replay_device_ms", r.replay_device_ms},
          {"device_ratio", r.device_ratio},
          {"original_host_ms", r.original_host_ms},
          {"replay_host_ms", r.replay_host_ms},
          {"host_ratio", r.host_ratio}};
}

void printRow(std::FILE* out, const FidelityFamilyRow& r) {
  fmt::print(out,
             "  {:<14} {:>6} {:>10.3f} {:>10.3f} {:>7.2f} {:>10.3f} {:>10.3f} {:>7.2f} {:>10.3f} "
             "{:>10.3f} {:>7.2f}\n",
             r.family, r.ops, r.original_cpu_ms, r.replay_cpu_ms, r.cpu_ratio, r.original_device_ms,
             r.replay_device_ms, r.device_ratio, r.original_host_ms, r.replay_host_ms,
             r.host_ratio);
}

nlohmann::json metadata(int pid, int64_t tid, const char* what, const std::string& name) {
  return {{"ph", "M"}, {"pid", pid}, {"tid", tid}, {"name", what}, {"args", {{"name", name}}}};
}

}  // namespace

FidelityReport buildFidelityReport(const LinkedTimeline& original,
                                   const replay::ReplayResult& replayed,
                                   const core::kineto::RecordedHostTime* host) {
  FidelityReport report;
  const core::kineto::RecordedHostTime as_recorded =
      host ? core::kineto::RecordedHostTime{}
           : core::kineto::recordedHostTime(original, core::kineto::KinetoTrace{}, 0.0);
  if (!host) host = &as_recorded;
  std::unordered_map<core::NodeId, const core::kineto::RecordedHostOp*> host_of;
  for (const auto& h : host->ops) host_of[h.id] = &h;
  report.host_time_mode = replayed.host_time.mode;
  report.host_scale = replayed.host_time.scale;
  report.profiler_us_per_event = host->profiler_us_per_event;
  report.replay_device = replayed.device;
  report.original_ops = original.top_level_ops;
  report.original_matched = original.matched_ops;
  report.original_iteration_ms = original.iteration_ms;
  report.original_iteration_source = original.iteration_source;
  report.replay_iteration_ms = replayed.iteration_ms_median;
  report.iteration_ratio = ratio(replayed.iteration_ms_median, original.iteration_ms);
  report.replay_iterations_ms = replayed.iterations_ms;
  std::unordered_map<core::NodeId, const replay::OpMeasurement*> by_id;
  for (const auto& m : replayed.per_op) by_id[m.id] = &m;
  std::map<std::string, FidelityFamilyRow> families;
  report.total.family = "total";
  for (const LinkedOp& op : original.ops) {
    auto it = by_id.find(op.id);
    if (!op.matched || it == by_id.end()) continue;
    const replay::OpMeasurement& m = *it->second;
    std::string family = m.family.empty() ? core::opFamilyOfName(op.name) : m.family;
    auto h = host_of.find(op.id);
    const double original_host_us = h == host_of.end() ? 0.0 : h->second->gap_us + h->second->op_us;
    for (FidelityFamilyRow* row : {&families[family], &report.total}) {
      ++row->ops;
      row->original_cpu_ms += op.duration_us / 1000.0;
      row->replay_cpu_ms += m.cpu_us / 1000.0;
      row->original_device_ms += op.device_us / 1000.0;
      row->replay_device_ms += m.device_us / 1000.0;
      row->original_host_ms += original_host_us / 1000.0;
      row->replay_host_ms += (m.gap_us + m.cpu_us) / 1000.0;
    }
    ++report.compared_ops;
  }
  for (auto& [name, row] : families) {
    row.family = name;
    finishRow(row);
    report.families.push_back(row);
  }
  finishRow(report.total);
  FidelityHostLoop& loop = report.host_loop;
  loop.original_ms = host->span_ms;
  loop.original_recorded_ms = host->recorded_span_ms;
  loop.replay_ms = replayed.host_loop_ms;
  loop.replay_without_waits_ms = std::max(0.0, replayed.host_loop_ms - replayed.host_time.wait_ms);
  loop.ratio = ratio(loop.replay_ms, loop.original_ms);
  loop.ratio_without_waits = ratio(loop.replay_without_waits_ms, loop.original_ms);
  std::sort(report.families.begin(), report.families.end(), [](const auto& a, const auto& b) {
    return a.original_cpu_ms + a.original_device_ms > b.original_cpu_ms + b.original_device_ms;
  });
  return report;
}

void printFidelityReport(const FidelityReport& report, std::FILE* out) {
  fmt::print(
      out, "Fidelity vs original run ({} of {} top-level ops linked, {} compared; replay on {})\n",
      report.original_matched, report.original_ops, report.compared_ops, report.replay_device);
  fmt::print(out,
             "  {:<14} {:>6} {:>10} {:>10} {:>7} {:>10} {:>10} {:>7} {:>10} {:>10} {:>7}\n",
             "family", "ops", "orig CPU", "replay CPU", "ratio", "orig dev", "replay dev", "ratio",
             "orig host", "rep. host", "ratio");
  for (const auto& row : report.families) printRow(out, row);
  printRow(out, report.total);
  fmt::print(out, "  iteration: original {:.3f} ms ({}), replay median {:.3f} ms, ratio {:.2f}\n",
             report.original_iteration_ms, report.original_iteration_source,
             report.replay_iteration_ms, report.iteration_ratio);
  const FidelityHostLoop& loop = report.host_loop;
  fmt::print(out,
             "  host loop (host time: {}{}): original {:.3f} ms{}, replay {:.3f} ms (ratio {:.2f}), "
             "without the added host time {:.3f} ms (ratio {:.2f})\n",
             report.host_time_mode,
             report.host_scale != 1.0 ? fmt::format(" x{:g}", report.host_scale) : "",
             loop.original_ms,
             report.profiler_us_per_event > 0
                 ? fmt::format(" ({:.3f} recorded, less {:.3f} us per profiler event)",
                               loop.original_recorded_ms, report.profiler_us_per_event)
                 : "",
             loop.replay_ms, loop.ratio, loop.replay_without_waits_ms, loop.ratio_without_waits);
  fmt::print(out,
             "  (orig host: the original's gap before each op and its span; rep. host: the "
             "replay's time before each call and the call)\n");
}

nlohmann::json fidelityReportJson(const FidelityReport& report) {
  nlohmann::json families = nlohmann::json::array();
  for (const auto& row : report.families) families.push_back(rowJson(row));
  nlohmann::json iterations = nlohmann::json::array();
  for (size_t i = 0; i < report.replay_iterations_ms.size(); ++i) {
    double ms = report.replay_iterations_ms[i];
    iterations.push_back({{"iteration", i},
                          {"replay_ms", ms},
                          {"original_ms", report.original_iteration_ms},
                          {"ratio", ratio(ms, report.original_iteration_ms)}});
  }
  return {{"replay_device", report.replay_device},
          {"original_ops", report.original_ops},
          {"original_matched", report.original_matched},
          {"compared_ops", report.compared_ops},
          {"original_iteration_ms", report.original_iteration_ms},
          {"original_iteration_source", report.original_iteration_source},
          {"replay_iteration_ms", report.replay_iteration_ms},
          {"iteration_ratio", report.iteration_ratio},
          {"iterations", iterations},
          {"families", families},
          {"total", rowJson(report.total)},
          {"host_time", report.host_time_mode},
          {"host_scale", report.host_scale},
          {"profiler_us_per_event", report.profiler_us_per_event},
          {"host_loop",
           {{"original_ms", report.host_loop.original_ms},
            {"original_recorded_ms", report.host_loop.original_recorded_ms},
            {"replay_ms", report.host_loop.replay_ms},
            {"replay_without_waits_ms", report.host_loop.replay_without_waits_ms},
            {"ratio", report.host_loop.ratio},
            {"ratio_without_waits", report.host_loop.ratio_without_waits}}}};
}

nlohmann::json originalTimelineTraceEvents(const LinkedTimeline& original, int pid,
                                           const std::string& process_name) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back(metadata(pid, 0, "process_name", process_name));
  const double origin = original.iteration_start_us;
  std::set<int64_t> cpu_threads, streams;
  // One complete event per kernel, on a row per stream; args say who launched it.
  auto addKernel = [&](const auto& k, nlohmann::json args) {
    streams.insert(k.stream);
    events.push_back({{"ph", "X"},
                      {"cat", core::kineto::eventCategoryName(k.category)},
                      {"name", k.name},
                      {"pid", pid},
                      {"tid", k.stream},
                      {"ts", k.start_us - origin},
                      {"dur", k.duration_us},
                      {"args", std::move(args)}});
  };
  for (const LinkedOp& op : original.ops) {
    if (!op.matched) continue;
    cpu_threads.insert(op.kineto_tid);
    events.push_back(
        {{"ph", "X"},
         {"cat", "cpu_op"},
         {"name", op.name},
         {"pid", pid},
         {"tid", op.kineto_tid},
         {"ts", op.start_us - origin},
         {"dur", op.duration_us},
         {"args",
          {{"et_node", op.id}, {"kernels", op.kernels.size()}, {"device_us", op.device_us}}}});
    for (const auto& k : op.kernels) {
      addKernel(k, {{"et_node", op.id}, {"op", op.name}});
    }
  }
  for (const auto& label : original.labels) {
    for (const auto& k : label.kernels) {
      addKernel(k, {{"et_node", label.id}, {"label", label.name}});
    }
  }
  for (int64_t tid : cpu_threads)
    events.push_back(metadata(pid, tid, "thread_name", fmt::format("CPU thread {}", tid)));
  for (int64_t s : streams)
    events.push_back(metadata(pid, s, "thread_name", fmt::format("stream {}", s)));
  return events;
}

nlohmann::json linkedTimelineJson(const LinkedTimeline& t, bool with_ops) {
  nlohmann::json threads = nlohmann::json::array();
  for (const auto& th : t.threads)
    threads.push_back({{"et_tid", th.et_tid},
                       {"kineto_tid", th.kineto_tid},
                       {"et_nodes", th.et_nodes},
                       {"matched_nodes", th.matched_nodes},
                       {"uses_sequence_numbers", th.uses_sequence_numbers},
                       {"sequence_offset", th.sequence_offset}});
  nlohmann::json unmatched = nlohmann::json::array();
  for (const LinkedOp& op : t.ops)
    if (!op.matched) unmatched.push_back({{"id", op.id}, {"name", op.name}});
  nlohmann::json j = {
      {"et", t.et_source},
      {"kineto", t.kineto_source},
      {"method", t.method},
      {"rank", t.rank},
      {"top_level_ops", t.top_level_ops},
      {"matched_ops", t.matched_ops},
      {"match_rate", t.match_rate},
      {"all_nodes", t.all_nodes},
      {"all_nodes_matched", t.all_nodes_matched},
      {"kernels", t.kernels},
      {"kernels_matched", t.kernels_matched},
      {"unlaunched_activities", t.unlaunched_activities},
      {"kernels_in_ops", t.kernels_in_ops},
      {"kernels_in_labels", t.kernels_in_labels},
      {"kernel_match_rate", t.kernels ? double(t.kernels_matched) / double(t.kernels) : 0.0},
      {"iteration_ms", t.iteration_ms},
      {"iteration_source", t.iteration_source},
      {"streams", t.streams},
      {"threads", threads},
      {"unmatched_ops", unmatched}};
  nlohmann::json labels = nlohmann::json::array();
  for (const auto& l : t.labels)
    labels.push_back({{"id", l.id},
                      {"name", l.name},
                      {"kernels", l.kernels.size()},
                      {"device_us", l.device_us}});
  j["label_kernels"] = labels;
  if (!with_ops) return j;
  nlohmann::json ops = nlohmann::json::array();
  for (const LinkedOp& op : t.ops) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& k : op.kernels)
      kernels.push_back({{"name", k.name},
                         {"stream", k.stream},
                         {"start_us", k.start_us - t.iteration_start_us},
                         {"duration_us", k.duration_us},
                         {"launch", k.launch_api}});
    ops.push_back({{"id", op.id},
                   {"name", op.name},
                   {"matched", op.matched},
                   {"tid", op.kineto_tid},
                   {"start_us", op.start_us - t.iteration_start_us},
                   {"duration_us", op.duration_us},
                   {"device_us", op.device_us},
                   {"kernels", kernels}});
  }
  j["ops"] = ops;
  return j;
}

}  // namespace tracetwin::cli
