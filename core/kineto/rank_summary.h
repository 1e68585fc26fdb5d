// Per-rank iteration, compute and communication time of a distributed job's
// Kineto traces, and their spread across ranks (the slowest rank sets the
// pace of every collective).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/kineto/kineto_trace.h"
#include "core/kineto/linker.h"

namespace tracetwin::core::kineto {

struct RankSummary {
  int64_t rank = -1;
  std::string kineto_source;
  std::string et_source;   // empty when the rank had no ET
  double match_rate = -1;  // -1 without an ET
  double iteration_ms = 0;
  std::string iteration_source;
  int64_t gpu_activities = 0;  // launched inside the iteration window
  // Busy time on the GPU (union of intervals over all streams), ms:
  double compute_ms = 0;       // kernels, memcpy, memset other than NCCL
  double comm_ms = 0;          // NCCL kernels
  double overlap_ms = 0;       // both at once
  double exposed_comm_ms = 0;  // comm_ms - overlap_ms
  double gpu_busy_ms = 0;      // union of all
};

// Window: `linked` iteration when given (ET + Kineto), else the first
// ProfilerStep#N span, else the whole CPU span of the trace. GPU activities
// count when their launch lies in the window.
RankSummary summarizeRank(const KinetoTrace& trace, const LinkedTimeline* linked);

struct SpreadStat {
  double min = 0, max = 0, mean = 0, stddev = 0;
  int64_t min_rank = -1, max_rank = -1;
  double max_over_min = 0;
};
SpreadStat spreadOf(const std::vector<RankSummary>& ranks, double RankSummary::*field);

}  // namespace tracetwin::core::kineto
