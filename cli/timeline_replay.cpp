#include "cli/timeline_replay.h"

#include <fmt/core.h>

#include <limits>
#include <map>

#include "core/errors.h"

namespace tracetwin::cli {
namespace {

constexpr int64_t kReplayThread = 0;  // the replay issues every op from one thread

std::string cpuName(const std::string& device) {
  return fmt::format("CPU thread (replay on {})", device);
}

// A collective's wait for the other ranks, at the start of its op, where
// the call lasted at least that long (an asynchronous collective waits
// elsewhere: its wait is not drawn).
void addWait(timeline::Track& cpu, const timeline::Slice& op, double wait_us, double transfer_us) {
  if (wait_us <= 0 || wait_us > op.dur_us) return;
  timeline::Slice w;
  w.name = "wait";
  w.category = "wait";
  w.start_us = op.start_us;
  w.dur_us = wait_us;
  w.node = op.node;
  w.args = {{"for", "the other ranks"}, {"op", op.name}, {"transfer_us", transfer_us}};
  cpu.slices.push_back(std::move(w));
}

}  // namespace

timeline::View replayView(const replay::ReplayResult& r, int rank) {
  timeline::View v;
  v.source = "replay";
  v.rank = rank;
  v.detail = fmt::format("replay on {}: median {:.3f} ms over {} iterations; the last one drawn",
                         r.device, r.iteration_ms_median, r.iterations_ms.size());
  v.iteration_us = r.iterations_ms.empty() ? 0.0 : r.iterations_ms.back() * 1000.0;
  timeline::Track& cpu = v.track(timeline::Track::Kind::kCpu, kReplayThread, cpuName(r.device));
  std::map<core::NodeId, size_t> op_at;
  for (const replay::OpMeasurement& m : r.per_op) {
    timeline::Slice s;
    s.name = m.name;
    s.category = "cpu_op";
    s.start_us = m.start_us;
    s.dur_us = m.last_cpu_us > 0 ? m.last_cpu_us : m.cpu_us;
    s.node = m.id;
    s.family = m.family;
    s.args = {{"cpu_us_median", m.cpu_us}};
    if (m.kernels > 0) s.args["device_us_median"] = m.device_us;
    if (m.kernels > 0) s.args["kernels"] = m.kernels;
    op_at[m.id] = cpu.slices.size();
    cpu.slices.push_back(std::move(s));
  }
  if (r.distributed) {
    for (const auto& c : r.distributed->collectives) {
      auto at = op_at.find(c.id);
      if (at != op_at.end()) addWait(cpu, cpu.slices[at->second], c.wait_us, c.transfer_us);
    }
  }
  // Kernels: shifted so the first attributed one starts with its op.
  double shift = 0;
  for (const replay::KernelRecord& k : r.kernels) {
    auto at = op_at.find(k.op);
    if (at == op_at.end()) continue;
    shift = std::max(0.0, cpu.slices[at->second].start_us - k.start_us);
    break;
  }
  // v.track() below appends device tracks, which moves the tracks: the CPU
  // track is reached by its index from here on (a reference to it read freed
  // memory once a second stream's track was added).
  const size_t cpu_at = static_cast<size_t>(&cpu - v.tracks.data());
  for (const replay::KernelRecord& k : r.kernels) {
    timeline::Slice s;
    s.name = k.name;
    s.category = k.kind == "kernel" ? "kernel" : "gpu_" + k.kind;
    s.start_us = k.start_us + shift;
    s.dur_us = k.duration_us;
    s.node = k.op;
    auto at = op_at.find(k.op);
    if (at != op_at.end()) s.args = {{"op", v.tracks[cpu_at].slices[at->second].name}};
    v.track(timeline::Track::Kind::kDevice, k.stream, fmt::format("stream {}", k.stream))
        .slices.push_back(std::move(s));
  }
  return v;
}

timeline::View replayViewFromReport(const nlohmann::json& report, int rank) {
  if (!report.is_object() || !report.contains("per_op") || !report["per_op"].is_array()) {
    throw InputError(fmt::format("rank {}: its replay report has no per_op list", rank));
  }
  timeline::View v;
  v.source = "replay";
  v.rank = rank;
  const std::string device = report.value("device", "cpu");
  const auto iterations = report.value("iterations_ms", std::vector<double>{});
  v.detail = fmt::format("replay on {}: median {:.3f} ms; the last iteration drawn", device,
                         report.value("iteration_ms_median", 0.0));
  v.iteration_us = iterations.empty() ? 0.0 : iterations.back() * 1000.0;
  timeline::Track& cpu = v.track(timeline::Track::Kind::kCpu, kReplayThread, cpuName(device));
  std::map<core::NodeId, size_t> op_at;
  try {
    for (const nlohmann::json& m : report["per_op"]) {
      timeline::Slice s;
      s.name = m.at("name").get<std::string>();
      s.category = "cpu_op";
      s.start_us = m.at("start_us").get<double>();
      const double last = m.value("last_cpu_us", 0.0);
      s.dur_us = last > 0 ? last : m.at("cpu_us").get<double>();
      s.node = m.at("id").get<core::NodeId>();
      s.family = m.value("family", "");
      s.args = {{"cpu_us_median", m.at("cpu_us").get<double>()}};
      op_at[s.node] = cpu.slices.size();
      cpu.slices.push_back(std::move(s));
    }
    if (report.contains("distributed") && report["distributed"].contains("collectives")) {
      for (const nlohmann::json& c : report["distributed"]["collectives"]) {
        auto at = op_at.find(c.at("id").get<core::NodeId>());
        if (at != op_at.end())
          addWait(cpu, cpu.slices[at->second], c.value("wait_us", 0.0),
                  c.value("transfer_us", 0.0));
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("rank {}: its replay report's per_op: {}", rank, e.what()));
  }
  return v;
}

std::unordered_map<core::NodeId, timeline::Measured> measuredOf(const replay::ReplayResult& r) {
  std::unordered_map<core::NodeId, timeline::Measured> out;
  const bool device = r.device != "cpu";
  for (const auto& m : r.per_op) out[m.id] = {device ? m.device_us : m.cpu_us};
  return out;
}

}  // namespace tracetwin::cli
