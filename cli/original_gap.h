// What a replay well under its original's time is missing. An execution trace
// records the ops and nothing between them, so time the original spent
// outside its ops (CPython's per-call cost of eager PyTorch, module hooks,
// data loading) is not replayed. Spread over the replayed ops, the
// difference says how much each op would have to carry to close it, which
// tells a Python-bound original from a replay that skipped work (adds5k's
// 0.3 us per op turned out to be the latter: most of its wrapped numbers
// were never created, replay/tensor_plan.h).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "replay/replayer.h"

namespace tracetwin::cli {

struct OriginalGap {
  double per_op_us = 0;     // (original - replayed iteration) / replayed ops
  int64_t ops = 0;          // replayed ops
  double median_op_us = 0;  // the median replayed op's median time
  std::string host_time = "replayed";  // ReplayResult::host_time.mode
};

// The replay at less than this fraction of the original gets the note: the
// fidelity tolerance of the replay issue (±10%).
inline constexpr double kFasterThanOriginal = 0.9;

// Set when the replay's median iteration is under kFasterThanOriginal times
// `original_ms` and it replayed ops; nullopt otherwise.
std::optional<OriginalGap> originalGapOf(double original_ms, const replay::ReplayResult& r);

std::string originalGapNote(const OriginalGap& gap);
nlohmann::json originalGapJson(const OriginalGap& gap);

}  // namespace tracetwin::cli
