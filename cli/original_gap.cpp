#include "cli/original_gap.h"

#include <fmt/core.h>

#include <algorithm>
#include <vector>

namespace tracetwin::cli {

std::optional<OriginalGap> originalGapOf(double original_ms, const replay::ReplayResult& r) {
  if (original_ms <= 0 || r.iteration_ms_median <= 0 || r.replayed_ops <= 0) return std::nullopt;
  if (r.iteration_ms_median >= kFasterThanOriginal * original_ms) return std::nullopt;
  OriginalGap gap;
  gap.ops = r.replayed_ops;
  gap.per_op_us = (original_ms - r.iteration_ms_median) * 1000.0 / double(r.replayed_ops);
  gap.host_time = r.host_time.mode;
  std::vector<double> op_us;
  op_us.reserve(r.per_op.size());
  for (const auto& m : r.per_op) op_us.push_back(m.cpu_us);
  if (!op_us.empty()) {
    auto mid = op_us.begin() + std::ptrdiff_t(op_us.size() / 2);
    std::nth_element(op_us.begin(), mid, op_us.end());
    gap.median_op_us = *mid;
  }
  return gap;
}

std::string originalGapNote(const OriginalGap& gap) {
  const std::string note = fmt::format(
      "the original took {:.2f} us per op longer ({} ops replayed, median {:.1f} us each): an "
      "execution trace records only the ops, and time the original spent outside them "
      "(Python's per-call cost of eager PyTorch, module hooks, data loading)",
      gap.per_op_us, gap.ops, gap.median_op_us);
  if (gap.host_time == "replayed") {
    return note +
           " is not replayed; --kineto ORIGINAL --host-time recorded reproduces it from the "
           "original's Kineto trace";
  }
  return note + fmt::format(" was added (--host-time {}) and the replay is still short of it",
                            gap.host_time);
}

nlohmann::json originalGapJson(const OriginalGap& gap) {
  return {{"per_op_us", gap.per_op_us},
          {"ops", gap.ops},
          {"median_op_us", gap.median_op_us},
          {"host_time", gap.host_time},
          {"note", originalGapNote(gap)}};
}

}  // namespace tracetwin::cli
