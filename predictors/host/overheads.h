// CPU overheads T1-T5 (DESIGN.md "Prediction"), keyed by op name or "__all__"
// (and T1 also by a place in the step, core/kineto/step_position_keys.h),
// read from the JSON `tracetwin link` writes:
// {"format":"tracetwin-overheads/1","sources":[...],
//  "t1":{"<op or __all__>":{"median_us","iqr_us","count"}}, "t2":{...}, ... "t5":{...},
//  "regions":{"<data-loading label>":{...}}}
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tracetwin::predictors {

// Which statistic of a measured overhead the simulation charges: the median
// (robust, the default) or the mean, which a step's sum of many gaps
// averages to (docs/prediction.md "Multi-rank prediction").
enum class OverheadStatistic { kMedian, kMean };

struct OverheadStat {
  double median_us = 0.0;
  double iqr_us = 0.0;
  int64_t count = 0;
  double mean_us = -1.0;  // of every sample, outliers included; -1: not recorded

  // By `stat`: the mean where the entry has one, else the median.
  double us(OverheadStatistic stat) const {
    return stat == OverheadStatistic::kMean && mean_us >= 0 ? mean_us : median_us;
  }
};

// T1 gap between ops, T2 op start -> first launch, T3 last launch -> op end,
// T4 the launch call, T5 gap between launches (ops with no kernels: their
// whole CPU time).
enum class Overhead { kT1 = 0, kT2, kT3, kT4, kT5 };
inline constexpr const char* kAllOps = "__all__";

struct OverheadTable {
  std::array<std::map<std::string, OverheadStat>, 5> t;
  // A data-loading label's span (core/kineto/overheads.h "regions"), by name.
  std::map<std::string, OverheadStat> regions;
  // "statistic": "mean" in the file (core/kineto/overheads.h): the samples
  // were corrected for the profiler's cost, and predict charges their mean
  // unless --overhead-stat says otherwise.
  bool charge_mean = false;
  std::vector<std::string> sources;
  // Lookup: the op's own entry, else "__all__", else the built-in default
  // (documented in docs/prediction.md; `used_default` tells which happened).
  // With kMean, an entry's mean_us where it has one, else its median.
  double us(Overhead which, const std::string& op, bool* used_default = nullptr,
            OverheadStatistic stat = OverheadStatistic::kMedian) const;
  // The span of the region `label` by `stat`; -1 when the table has none.
  double regionUs(const std::string& label, OverheadStatistic stat) const;
  bool empty() const;
  nlohmann::json toJson() const;
  static OverheadTable fromJson(const nlohmann::json& j, const std::string& source);
};

// Built-in defaults when nothing was measured (typical eager PyTorch on a
// server CPU): T1 6 us, T2 8 us, T3 3 us, T4 4 us, T5 2 us.
double defaultOverheadUs(Overhead which);

// Throws InputError naming the file on bad JSON, wrong format tag or types.
OverheadTable loadOverheads(const std::string& path);

}  // namespace tracetwin::predictors
