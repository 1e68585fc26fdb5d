// What a small op costs on top of its kernel model for each input tensor that
// went cold: the tensor's metadata (TensorImpl, storage) and its first lines
// come from DRAM, latency-bound, however few bytes it holds.
//
// The optimizer of a training step calls add_, mul_, addcdiv_ on one small
// parameter after another, each last touched an iteration ago. Captured from
// Debian's torch and replayed here: 600 add_ on distinct [16] tensors took
// 0.71 us each after a 64 MiB stream, 0.33 without it, 0.34 on one pair of
// tensors (zero_ +0.20 us, addcdiv_ +0.44, sqrt +0.21 on 16 floats). The
// bandwidth floor of the cold bytes (cache_reuse.h) is nothing at that size.
//
// Calibration measures it (calibration/evicted_units.h): small grid points
// right after a stream that evicts every cache, then again on the same
// tensors, hot; per cold input tensor, the difference less the DRAM time of
// the tensor's bytes.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tracetwin::predictors {

// One grid point's op measured both ways.
struct ColdTensorPair {
  std::string op;       // "aten::add_"
  std::string family;   // core::opFamily
  double hot_us = 0;    // the same op on the same tensors, right after
  double cold_us = 0;   // after the evicting stream
  double tensors = 0;   // its input tensors (all cold after the stream)
  double bytes = 0;     // their bytes
};

class ColdTensorModel {
 public:
  std::map<std::string, double> per_family_us;  // families with >= kMinPairs pairs
  double all_us = 0;                            // every pair
  int64_t pairs = 0;

  static constexpr int64_t kMinPairs = 3;

  bool empty() const { return pairs == 0; }
  // Per cold input tensor: the family's figure, else the one over all pairs.
  double perTensorUs(const std::string& family) const;

  nlohmann::json toJson() const;
  // Throws InputError naming `source` on a malformed object.
  static ColdTensorModel fromJson(const nlohmann::json& j, const std::string& source);
};

// Per pair (cold - hot - bytes / dram_bandwidth) / tensors, at least 0; the
// medians per family and over all. Pairs without a positive time or tensor
// are left out; none left: an empty model.
ColdTensorModel fitColdTensors(const std::vector<ColdTensorPair>& pairs, double dram_bandwidth);

}  // namespace tracetwin::predictors
