// CPU overheads T1-T5 (DESIGN.md "Prediction / CPU overheads", after Lin et
// al., arXiv 2201.07821) measured from Kineto traces:
//   T1  gap between consecutive top-level ops on a thread, keyed by the op
//       that follows the gap (and "__all__"), or by its place in the step
//       where the latest op before it ran on another thread or there is
//       none (step_position_keys.h);
//   T2  op start -> start of its first device call, keyed by op name;
//   T3  end of its last device call -> op end, keyed by op name;
//   T4  the device call itself, keyed by API name ("cudaLaunchKernel" ...);
//   T5  gaps between consecutive device calls of one op, keyed by op name;
//       for op names that never issue a device call, their whole CPU time.
// A "device call" is a cuda_runtime / cuda_driver event that caused a GPU
// activity (matched by correlation), so cudaEventQuery & co. do not count.
// Every table also has an "__all__" entry over all samples. Each sample
// leaves out the profiler's stalls inside it (profiler_stalls.h).
// Data loading (the outermost user annotations the top-level selection drops,
// core::isDataLoaderLabel) is a region of its own: its ops are neither
// top-level ops nor T1 samples, its span is a "regions" sample keyed by the
// label's name, and the T1 of the op after it excludes it.
//
// File format (read by the predictors):
//   {"format": "tracetwin-overheads/1", "sources": [file names],
//    "t1": {"<op name or __all__>": {"median_us": x, "iqr_us": y, "count": n, "mean_us": m}},
//   (mean_us, of every sample, since session 36; absent in older files)
//    "t2": {...}, "t3": {...}, "t4": {"cudaLaunchKernel": {...}}, "t5": {...},
//    "regions": {"<label name>": {...}}}   (since session 29; absent: none)
//   "statistic": "mean" (since 2026-11-27, absent: the median) says which
//   statistic predict charges by default (OverheadTable::charge_mean).
#pragma once

#include <array>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/graph.h"
#include "core/kineto/kineto_trace.h"
#include "core/kineto/recorded_host_time.h"
#include "core/kineto/robust_stats.h"

namespace tracetwin::core::kineto {

inline constexpr const char* kOverheadsFormat = "tracetwin-overheads/1";
inline constexpr const char* kAllKey = "__all__";

// Which cpu_op names are operators (their outermost occurrence on a thread is
// a top-level op; everything else is a label to descend through).
using OperatorPredicate = std::function<bool(std::string_view name)>;

// Names of the ET's operator nodes (core::isOperator) - the same split the
// top-level selection makes, applied to every iteration of the Kineto trace.
OperatorPredicate operatorsOfGraph(const Graph& graph);

// Without an ET: "aten::*", "prims::*", "fbgemm::*" and record_param_comms.
OperatorPredicate defaultOperatorPredicate();

struct OverheadTable {
  std::vector<std::string> sources;
  // t[0] = T1 ... t[4] = T5; key -> statistic in microseconds.
  std::array<std::map<std::string, RobustStat>, 5> t;
  // The samples of at least one trace had the profiler's cost taken off
  // (addTrace with an unprofiled span): many are near zero, and a step's sum
  // averages to their mean, not their median. Written as "statistic":
  // "mean", the statistic `predict` charges unless --overhead-stat says.
  bool charge_mean = false;
  std::map<std::string, RobustStat> regions;  // label name -> its span (data loading)
};

// Accumulates samples from one or more traces (e.g. all ranks of a job).
//
// The profiler's own cost: a Kineto trace is a *profiled* step, whose host
// side spans 1.5-5.6x the step the original runs without a profiler (the
// H100 hosttime captures of 2026-11-27: mlp 10.48 ms profiled against a
// 1.87 ms step; T1-T5 taken as recorded predicted those steps 2.2-3.2x too
// slow). With `unprofiled_host_us` > 0 (the host span of the unprofiled
// step: recordedHostTime's span_ms for the capture's meta step time, so a
// device-bound step is judged as the recorded host time judges it) the
// trace's samples are corrected together with profilerCorrection
// (recorded_host_time.h), each sample an "op" whose events are the
// profiler's records inside its interval (the op's own record, nested ops,
// launches): per record, floored at zero, then a scale, so that the samples
// sum to that span. 0 keeps the samples as recorded.
class OverheadCollector {
 public:
  // How a trace's samples lose the profiler's cost.
  enum class Correction {
    // To `unprofiled_host_us` (profilerCorrection); as recorded when it is 0.
    kToSpan,
    // The step does not tell the host span (its kernels fill it): at
    // finish(), the median per-record cost of the traces corrected to a span.
    kBorrow,
    // `unprofiled_host_us` is the longest host span the step's kernels allow
    // (a device-bound step: any shorter host gives the same step), so the
    // correction to it is the least the profiler can have cost. At finish(),
    // that or kBorrow's, whichever leaves the smaller host time.
    kToSpanAtMost,
  };
  void addTrace(const KinetoTrace& trace, const OperatorPredicate& is_operator,
                double unprofiled_host_us = 0, Correction correction = Correction::kToSpan);
  // The correction the last addTrace applied (none: 0 per record, scale 1).
  const ProfilerCorrection& lastCorrection() const { return last_correction_; }
  // What finish() takes off per profiler record of the traces waiting for
  // a borrowed correction (0: none waits, or no trace was corrected to a span).
  double borrowedPerRecordUs() const;
  int borrowingTraces() const { return static_cast<int>(borrowing_.size()); }
  // kToSpanAtMost traces whose samples finish() corrects by the borrowed cost.
  int atMostTracesBorrowing() const;
  OverheadTable finish() const;
  int64_t topLevelOps() const { return top_level_ops_; }

 private:
  using Samples = std::map<std::string, std::vector<double>>;
  // One sample of a trace with the profiler records inside its interval
  // (kNoKernelSample in `which`: an op's whole CPU time where it launched
  // nothing).
  struct PendingSample {
    int which;
    std::string key;
    double us;
    int64_t events;
  };
  void store(const PendingSample& p, double us, std::array<Samples, 5>& samples,
             Samples& no_kernel) const;
  // Whether the borrowed cost leaves `trace` less host time than `own`.
  bool takesBorrowed(const std::vector<PendingSample>& trace, const ProfilerCorrection& own) const;
  std::vector<std::vector<PendingSample>> borrowing_;  // traces waiting for finish()
  // kToSpanAtMost traces with their correction to the span, for finish().
  std::vector<std::pair<std::vector<PendingSample>, ProfilerCorrection>> at_most_;
  std::vector<double> per_record_us_;                  // of each corrected trace
  std::vector<std::string> sources_;
  std::array<Samples, 5> samples_;
  Samples no_kernel_time_;                         // op name -> whole CPU time of kernel-less calls
  Samples regions_;                                // DataLoader label -> its spans
  std::unordered_set<std::string> launching_ops_;  // op names seen with device calls
  int64_t top_level_ops_ = 0;
  ProfilerCorrection last_correction_;
  bool corrected_ = false;  // some trace's samples were corrected
};

// Serialises in the format above (sources as given, keys sorted): what
// `link --overheads-out` writes and predictors::loadOverheads reads (`predict
// --overheads`, `fit`), the one reader of the format.
std::string overheadsToJson(const OverheadTable& table);

}  // namespace tracetwin::core::kineto
