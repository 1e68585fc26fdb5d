#include "replay/result_json.h"

#include <fmt/core.h>

#include <set>

#include "core/errors.h"
#include "core/text_file.h"

namespace tracetwin::replay {
namespace {

nlohmann::json issues(const std::vector<OpIssue>& list) {
  auto out = nlohmann::json::array();
  for (const auto& i : list) out.push_back({{"id", i.id}, {"name", i.name}, {"reason", i.reason}});
  return out;
}

nlohmann::json metadata(const char* what, int pid, int64_t tid, const std::string& name) {
  return {{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

}  // namespace

nlohmann::json hostTimeToJson(const HostTimeUse& h) {
  nlohmann::json j = {{"mode", h.mode}, {"scale", h.scale}};
  if (h.mode == "replayed") return j;
  auto overruns = nlohmann::json::array();
  for (const HostOverrun& o : h.largest_overruns) {
    overruns.push_back({{"id", o.id},
                        {"name", o.name},
                        {"original_us", o.original_us},
                        {"replay_us", o.replay_us}});
  }
  j.update({{"source", h.source},
            {"notes", h.notes},
            {"ops_with_target", h.ops_with_target},
            {"ops_without_target", h.ops_without_target},
            {"warmup_samples", h.warmup_samples},
            {"target_ms", h.target_ms},
            {"replay_own_ms", h.replay_own_ms},
            {"wait_ms", h.wait_ms},
            {"ops_over", h.ops_over},
            {"ops_over_ms", h.ops_over_ms},
            {"absorbed_ms", h.absorbed_ms},
            {"repaid_ms", h.repaid_ms},
            {"behind_ms", h.behind_ms},
            {"largest_overruns", overruns},
            {"busy_wait_overshoot_us", h.busy_wait_overshoot_us},
            {"peer_bound_ops", h.peer_bound_ops},
            {"peer_bound_ms", h.peer_bound_ms}});
  return j;
}

nlohmann::json compiledReplayJson(const CompiledReplay& c) {
  return {{"kernels", c.kernels},
          {"forward_kernels", c.forward_kernels},
          {"backward_kernels", c.backward_kernels},
          {"launched_from_cache", c.launched},
          {"stood_in_recorded", c.recorded_standins},
          {"stood_in_predicted", c.predicted_standins},
          {"not_stood_in", c.not_stood_in},
          {"stood_in_recorded_us", c.recorded_standin_us},
          {"stood_in_predicted_us", c.predicted_standin_us},
          {"inductor_cache", c.inductor_cache},
          {"waits_on", c.waits_on},
          {"regions", c.regions},
          {"regions_without_kernels", c.regions_without_kernels},
          {"warnings", c.warnings}};
}

nlohmann::json replayResultToJson(const ReplayResult& r) {
  nlohmann::json j;
  j["device"] = r.device;
  j["threads"] = r.threads;
  j["iterations_ms"] = r.iterations_ms;
  j["iteration_ms_median"] = r.iteration_ms_median;
  j["page_faults"] = r.page_faults;
  j["iterations_cpu_ms"] = r.iterations_cpu_ms;
  j["iteration_cpu_ms_median"] = r.iteration_cpu_ms_median;
  j["outside_ops_ms"] = r.outside_ops_ms;
  j["host_loop_ms"] = r.host_loop_ms;
  j["host_time"] = hostTimeToJson(r.host_time);
  if (r.zipf_lookups > 0) j["zipf_lookups"] = r.zipf_lookups;
  j["selected_ops"] = r.selected_ops;
  j["replayed_ops"] = r.replayed_ops;
  j["coverage"] = r.coverage;
  j["skipped"] = issues(r.skipped);
  j["placeholders"] = nlohmann::json::array();
  for (const auto& p : r.placeholders) {
    j["placeholders"].push_back({{"id", p.id},
                                 {"name", p.name},
                                 {"recorded_us", p.recorded_us},
                                 {"device_us", p.device_us},
                                 {"source", p.source}});
  }
  if (r.compiled.kernels > 0 || r.compiled.regions > 0) j["compiled"] = compiledReplayJson(r.compiled);
  j["failed"] = issues(r.failed);
  j["mismatched"] = issues(r.mismatched);
  auto subs = nlohmann::json::array();
  for (const auto& s : r.substitutions)
    subs.push_back({{"id", s.id}, {"from", s.from}, {"to", s.to}});
  j["substitutions"] = subs;
  j["overload_mappings"] = r.overload_mappings;
  j["streams"] = {{"recorded", r.streams.recorded},
                  {"applied", r.streams.applied},
                  {"cross_stream_waits", r.streams.cross_stream_waits}};
  if (!r.streams.note.empty()) j["streams"]["note"] = r.streams.note;
  auto ops = nlohmann::json::array();
  for (const auto& m : r.per_op) {
    ops.push_back({{"id", m.id},
                   {"name", m.name},
                   {"family", m.family},
                   {"cpu_us", m.cpu_us},
                   {"device_us", m.device_us},
                   {"kernels", m.kernels},
                   {"start_us", m.start_us},
                   {"gap_us", m.gap_us},
                   {"host_wait_us", m.host_wait_us},
                   {"last_cpu_us", m.last_cpu_us}});
  }
  j["per_op"] = ops;
  if (r.device_summary.collected) {
    const DeviceSummary& d = r.device_summary;
    j["device_summary"] = {{"busy_ms", d.busy_ms},
                           {"busy_share", d.busy_share},
                           {"span_ms", d.span_ms},
                           {"attributed_share", d.attributed_share},
                           {"records", d.records},
                           {"unattributed_records", d.unattributed_records},
                           {"dropped_records", d.dropped_records},
                           {"kernels_per_op", d.kernels_per_op}};
  }
  j["peak_memory_bytes"] = r.peak_memory_bytes;
  j["trace_peak_bytes"] = r.trace_peak_bytes;
  j["interrupted"] = r.interrupted;
  if (r.distributed) j["distributed"] = distributedToJson(*r.distributed);
  return j;
}

nlohmann::json distributedToJson(const dist::DistributedSummary& d) {
  auto calls = nlohmann::json::array();
  for (const dist::CollectiveTiming& c : d.collectives) {
    calls.push_back({{"id", c.id},
                     {"name", c.name},
                     {"group", c.group},
                     {"bytes", c.bytes},
                     {"wait_us", c.wait_us},
                     {"transfer_us", c.transfer_us},
                     {"wait_mean_us", c.wait_mean_us},
                     {"transfer_mean_us", c.transfer_mean_us}});
  }
  return {{"rank", d.rank},
          {"world_size", d.world_size},
          {"local_rank", d.local_rank},
          {"launcher", d.launcher},
          {"backend", d.backend},
          {"host", d.host},
          {"comm_ops", d.comm_ops},
          {"comm_ms", d.comm_ms},
          {"wait_ms", d.wait_ms},
          {"transfer_ms", d.transfer_ms},
          {"wait_mean_ms", d.wait_mean_ms},
          {"transfer_mean_ms", d.transfer_mean_ms},
          {"collectives", calls},
          {"backend_notes", d.notes},
          {"step_ms", d.step_ms},
          {"step_ms_median", d.step_ms_median},
          {"step_ms_mean", d.step_ms_mean},
          {"straggler", d.straggler}};
}

nlohmann::json chromeTraceEvents(const ReplayResult& r, int pid, const std::string& process_name) {
  auto events = nlohmann::json::array();
  events.push_back(metadata("process_name", pid, 0, process_name));
  events.push_back(metadata("thread_name", pid, 0, "CPU ops (" + r.device + ")"));
  for (const auto& m : r.per_op) {
    events.push_back({{"ph", "X"},
                      {"cat", "cpu_op"},
                      {"name", m.name},
                      {"pid", pid},
                      {"tid", 0},
                      {"ts", m.start_us},
                      {"dur", m.cpu_us},
                      {"args", {{"id", m.id}, {"family", m.family}}}});
  }
  std::set<int64_t> streams;
  for (const auto& k : r.kernels) {
    // Streams get their own tracks, offset so they never collide with the CPU thread.
    const int64_t tid = 1000 + k.stream;
    if (streams.insert(k.stream).second) {
      events.push_back(metadata("thread_name", pid, tid, fmt::format("stream {}", k.stream)));
    }
    events.push_back({{"ph", "X"},
                      {"cat", "kernel"},
                      {"name", k.name},
                      {"pid", pid},
                      {"tid", tid},
                      {"ts", k.start_us},
                      {"dur", k.duration_us}});
  }
  return events;
}

void writeChromeTrace(const std::string& path, const ReplayResult& result,
                      const nlohmann::json& extra_events) {
  nlohmann::json doc;
  doc["traceEvents"] = chromeTraceEvents(result);
  for (const auto& e : extra_events) doc["traceEvents"].push_back(e);
  doc["displayTimeUnit"] = "ms";
  core::writeTextFile(path, doc.dump() + "\n");
}

}  // namespace tracetwin::replay
