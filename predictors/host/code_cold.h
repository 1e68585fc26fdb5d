// What a small op costs on top of its kernel model when its code went cold
// because time passed since its previous call.
//
// On the development VM, aten::t took 1.3 us after a 14 us mm, 2.0 after a
// 0.7 ms one, 11 after 5.7 ms and 36 after 20 ms (the same mm code, under 2
// MB of traffic; docs/prediction.md has the table). Whatever else shares the
// core (a neighbour on the sibling hyperthread, the kernel) evicts an idle
// op's code and data at some rate, and the kernel models, fitted on
// microbenchmarks that call each op every few microseconds, never see it.
//
// Two parts, both growing as 1 - exp(-idle / tau):
//  - the op's own code and data, idle since its previous call: P per op,
//    else per family, else over all ops;
//  - what every op shares (dispatcher, allocator, the replay loop), idle for
//    the duration of the op before: S. Only the first small op after a long
//    one pays it (aten::t right after a 20 ms mm: +35 us; aten::view fourth
//    after it: +6).
// Calibration measures small grid points once more after a compute-bound
// spacer of a known duration (an mm), directly ("shared" pairs: S + P) and
// with a tiny op in between that re-warms the shared part (P alone), and
// fits tau, P and S.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tracetwin::predictors {

// One grid point measured both ways.
struct CodeColdPair {
  std::string op;          // "aten::t"
  std::string family;      // core::opFamily
  double warm_us = 0;      // interleaved among small ops
  double cold_us = 0;      // after a spacer
  double idle_us = 0;      // time since the op's previous call, in the cold measurement
  double previous_us = 0;  // duration of the op right before it
};

class CodeColdModel {
 public:
  double tau_us = 0;
  double shared_us = 0;                         // S
  std::map<std::string, double> per_op_us;      // ops with >= kMinPairs pairs
  std::map<std::string, double> per_family_us;  // families with >= kMinPairs pairs
  double all_us = 0;                            // every pair
  int64_t pairs = 0;

  static constexpr int64_t kMinPairs = 3;
  // The term applies to ops predicted at no more than this: calibration
  // measures it on the grid points it interleaves (kInterleaveMaxUs there).
  static constexpr double kMaxOpUs = 80;

  bool empty() const { return pairs == 0 || tau_us <= 0; }
  // The full penalty of an op (P), before the idle-time factor.
  double fullPenaltyUs(const std::string& op, const std::string& family) const;
  // P * (1 - exp(-idle_us / tau)) + S * (1 - exp(-previous_us / tau)); 0
  // when the model is empty.
  double penaltyUs(const std::string& op, const std::string& family, double idle_us,
                   double previous_us) const;
  // Ops above kMaxOpUs: P * (1 - exp(-idle_us / tau)) alone, with idle_us
  // the time since the op last ran on the same shapes. oneDNN (LibTorch's
  // CPU convolutions) runs a kernel generated per shape, so the code a
  // large op needs is its shape's: in resnet18_small the first 3x3 conv of
  // each width replays 30-170 us slower than the identical layers right
  // after it (256 channels at 2x2: 503 us, then 323 and 343).
  double ownPenaltyUs(const std::string& op, const std::string& family, double idle_us) const;

  nlohmann::json toJson() const;
  // Throws InputError naming `source` on a malformed object.
  static CodeColdModel fromJson(const nlohmann::json& j, const std::string& source);
};

// Fits tau (on a grid from 0.25 to 200 ms, least absolute error over the
// pairs), P from the pairs whose previous op was short (< tau / 20) and S
// from the rest. No usable pair: an empty model.
CodeColdModel fitCodeCold(const std::vector<CodeColdPair>& pairs);

// For ops[i] of one iteration in issue order with durations us[i], the time
// since the previous call of an op of the same name (wrapping into the
// previous iteration: an op called once gets the iteration but itself).
std::vector<double> idleSinceLastCall(const std::vector<const std::string*>& names,
                                      const std::vector<double>& us);
// The same with any key per op (the predictor's shape keys).
std::vector<double> idleSinceLastCall(const std::vector<uint64_t>& keys,
                                      const std::vector<double>& us);

}  // namespace tracetwin::predictors
