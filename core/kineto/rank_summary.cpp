#include "core/kineto/rank_summary.h"

#include "core/intervals.h"

#include <algorithm>
#include <cmath>

#include "core/kineto/trace_index.h"

namespace tracetwin::core::kineto {
namespace {

struct Window {
  double start = 0, end = 0;
  std::string source;
};

Window findWindow(const KinetoTrace& trace, const TraceIndex& index, const LinkedTimeline* linked) {
  if (linked && linked->matched_ops > 0)
    return {linked->iteration_start_us, linked->iteration_end_us, linked->iteration_source};
  Window step, span{0, 0, "traced span"};
  bool any = false;
  for (const auto& [tid, list] : index.cpu_by_tid) {
    for (size_t i : list) {
      const KinetoEvent& e = trace.events[i];
      bool is_step = e.name.rfind("ProfilerStep#", 0) == 0;
      if (is_step && (step.source.empty() || e.ts < step.start)) step = {e.ts, e.end(), e.name};
      span.start = any ? std::min(span.start, e.ts) : e.ts;
      span.end = any ? std::max(span.end, e.end()) : e.end();
      any = true;
    }
  }
  return step.source.empty() ? span : step;
}

}  // namespace

RankSummary summarizeRank(const KinetoTrace& trace, const LinkedTimeline* linked) {
  RankSummary out;
  out.kineto_source = trace.source_path;
  if (trace.distributed) out.rank = trace.distributed->rank;
  if (linked) {
    out.et_source = linked->et_source;
    out.match_rate = linked->match_rate;
  }
  TraceIndex index = buildTraceIndex(trace);
  Window w = findWindow(trace, index, linked);
  out.iteration_ms = (w.end - w.start) / 1000.0;
  out.iteration_source = w.source;
  std::vector<std::pair<double, double>> compute, comm, all;
  for (const auto& [launch, activities] : index.activities_by_launch) {
    double ts = trace.events[launch].ts;
    if (ts < w.start || ts > w.end) continue;
    for (size_t a : activities) {
      const KinetoEvent& e = trace.events[a];
      (isCommunicationKernel(e) ? comm : compute).emplace_back(e.ts, e.end());
      all.emplace_back(e.ts, e.end());
      ++out.gpu_activities;
    }
  }
  out.compute_ms = core::unionLength(compute) / 1000.0;
  out.comm_ms = core::unionLength(comm) / 1000.0;
  out.gpu_busy_ms = core::unionLength(all) / 1000.0;
  out.overlap_ms = std::max(0.0, out.compute_ms + out.comm_ms - out.gpu_busy_ms);
  out.exposed_comm_ms = out.comm_ms - out.overlap_ms;
  return out;
}

SpreadStat spreadOf(const std::vector<RankSummary>& ranks, double RankSummary::*field) {
  SpreadStat s;
  if (ranks.empty()) return s;
  s.min = s.max = ranks[0].*field;
  s.min_rank = s.max_rank = ranks[0].rank;
  double sum = 0;
  for (const RankSummary& r : ranks) {
    double v = r.*field;
    sum += v;
    if (v < s.min) {
      s.min = v;
      s.min_rank = r.rank;
    }
    if (v > s.max) {
      s.max = v;
      s.max_rank = r.rank;
    }
  }
  s.mean = sum / static_cast<double>(ranks.size());
  double var = 0;
  for (const RankSummary& r : ranks) var += (r.*field - s.mean) * (r.*field - s.mean);
  s.stddev = std::sqrt(var / static_cast<double>(ranks.size()));
  s.max_over_min = s.min > 0 ? s.max / s.min : 0;
  return s;
}

}  // namespace tracetwin::core::kineto
