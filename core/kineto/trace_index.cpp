#include "core/kineto/trace_index.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "core/errors.h"

namespace tracetwin::core::kineto {

namespace {
// How far before its launch an activity may seem to start: CUPTI's clock
// conversion errs by microseconds, not by a tenth of a millisecond.
constexpr double kLaunchSkewToleranceUs = 100;
}  // namespace

TraceIndex buildTraceIndex(const KinetoTrace& trace) {
  TraceIndex index;
  const auto& events = trace.events;
  for (size_t i = 0; i < events.size(); ++i) {
    const KinetoEvent& e = events[i];
    if (isCpuRange(e.category)) {
      index.cpu_by_tid[e.tid].push_back(i);
    } else if (isLaunchCategory(e.category)) {
      index.launches_by_tid[e.tid].push_back(i);
      if (e.correlation != kAbsent) {
        const auto [it, fresh] = index.launch_by_correlation.emplace(e.correlation, i);
        // Every stored trace has one launch per correlation id; with repeats
        // every kernel went to the first launch (a bad-input hunt: gemm 0.006
        // ms for 17.6, "100% attributed").
        if (!fresh) {
          throw InputError(fmt::format(
              "{}: events {} and {} launch with one correlation id, {}: a profiler trace "
              "gives each launch its own",
              trace.source_path, it->second, i, e.correlation));
        }
      }
    } else if (isGpuActivity(e.category)) {
      index.activities.push_back(i);
    }
  }
  for (auto& [tid, list] : index.cpu_by_tid) {
    // Timestamps have 1 us resolution, so an op that takes 0 us and the
    // next one often share a ts. "External id" is handed out at op entry
    // (on all 9 shared traces it never decreases along a thread's
    // timestamps), so it breaks those ties in entry order. Without it, the
    // legacy profiler's export (scripts/legacy_profiler_export.py) numbers
    // its events in entry order ("Ev Idx"): a 0 us empty_strided and the
    // copy_ after it share adds5k's ts, and the longer copy_ went first
    // whenever the host stretched it. Without either, the longer event (the
    // parent) goes first.
    std::stable_sort(list.begin(), list.end(), [&](size_t a, size_t b) {
      const KinetoEvent& x = events[a];
      const KinetoEvent& y = events[b];
      if (x.ts != y.ts) return x.ts < y.ts;
      if (x.external_id != kAbsent && y.external_id != kAbsent && x.external_id != y.external_id)
        return x.external_id < y.external_id;
      if (x.external_id == kAbsent && y.external_id == kAbsent && x.ev_idx != kAbsent &&
          y.ev_idx != kAbsent && x.ev_idx != y.ev_idx)
        return x.ev_idx < y.ev_idx;
      if (x.dur != y.dur) return x.dur > y.dur;
      return a < b;
    });
  }
  for (auto& [tid, list] : index.launches_by_tid) {
    std::stable_sort(list.begin(), list.end(),
                     [&](size_t a, size_t b) { return events[a].ts < events[b].ts; });
  }
  for (size_t a : index.activities) {
    auto it = index.launch_by_correlation.find(events[a].correlation);
    if (events[a].correlation == kAbsent || it == index.launch_by_correlation.end()) {
      ++index.orphan_activities;
      continue;
    }
    std::vector<size_t>& caused = index.activities_by_launch[it->second];
    caused.push_back(a);
    // No stored GPU trace (38) starts a kernel sooner than 4 us after its
    // launch (CUPTI puts GPU times on the host clock); one that ran before it was
    // launched is a rewritten or merged trace, its times not the run's.
    if (events[a].ts < events[it->second].ts - kLaunchSkewToleranceUs) {
      throw InputError(fmt::format(
          "{}: event {} ({}) starts {:.1f} us before event {} ({}) that launched it (correlation "
          "id {}): a profiler trace's kernels run after their launch, so its times were rewritten",
          trace.source_path, a, events[a].name, events[it->second].ts - events[a].ts, it->second,
          events[it->second].name, events[a].correlation));
    }
    // A kernel launch starts one kernel; only a graph launch (cudaGraphLaunch)
    // starts many. None of the 79 stored profiler traces has a second
    // activity on a kernel launch; traces whose correlation ids were merged
    // or rewritten put every kernel on one (gemm 0.006 ms for 17.6).
    const KinetoEvent& launch = events[it->second];
    if (caused.size() == 2 &&
        std::string_view(launch.name).find("LaunchKernel") != std::string_view::npos) {
      throw InputError(fmt::format(
          "{}: events {} and {} both ran for {} (event {}, correlation id {}): a kernel launch "
          "starts one kernel (only a graph launch starts several), so the trace's correlation "
          "ids are not the profiler's",
          trace.source_path, caused[0], a, launch.name, it->second, launch.correlation));
    }
  }
  return index;
}

bool isCommunicationKernel(const KinetoEvent& event) {
  if (event.category != EventCategory::kKernel) return false;
  std::string_view name = event.name;
  for (size_t i = 0; i + 4 <= name.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(name[i])) == 'n' &&
        std::tolower(static_cast<unsigned char>(name[i + 1])) == 'c' &&
        std::tolower(static_cast<unsigned char>(name[i + 2])) == 'c' &&
        std::tolower(static_cast<unsigned char>(name[i + 3])) == 'l') {
      return true;
    }
  }
  return false;
}

}  // namespace tracetwin::core::kineto
