// Zipf-distributed embedding indices for the value generators
// (value_generators.h, IntFill::Kind::kZipf): row i of a table drawn with
// probability proportional to (i+1)^-s, as scripts/workloads/dlrm_sweep.py
// draws them in PyTorch (inverse CDF). Torch-free: the slot table draws the
// uniforms from LibTorch's seeded generator, so a replay's indices depend on
// its seed only, and the statistics are tested without LibTorch.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/graph.h"
#include "core/index_law.h"

namespace tracetwin::replay {

// The cumulative distribution of one (rows, exponent, first_row), built once
// and shared (first_row > 0: row i weighted (first_row + i + 1)^-exponent, a
// shard of a larger Zipf table: core/index_law.h):
// a 200,000-row table is 1.6 MB of doubles and 200,000 powers (~5 ms), and a
// replay refills its indices before every iteration.
class ZipfCdf {
 public:
  ZipfCdf(int64_t rows, double exponent, int64_t first_row = 0);
  // The shared table of (rows, exponent, first_row), built on first use
  // (thread-safe).
  static std::shared_ptr<const ZipfCdf> of(int64_t rows, double exponent, int64_t first_row = 0);

  // The row uniform `u` in [0, 1) falls on: the first i with cdf[i] > u,
  // 0 <= i < rows (binary search: 18 steps for 200,000 rows).
  int64_t row(double u) const;
  int64_t rows() const { return int64_t(cdf_.size()); }
  double exponent() const { return exponent_; }
  // Probability of row i.
  double probability(int64_t i) const;

 private:
  std::vector<double> cdf_;  // cdf_[i] = P(row <= i), the last exactly 1
  double exponent_ = 0;
};

// out[k] = low + cdf.row(uniforms[k]) for k < n.
void zipfRowsFromUniforms(const ZipfCdf& cdf, int64_t low, const double* uniforms, int64_t n,
                          int64_t* out);

// The lookups of `asked` (op id -> exponent) drawn Zipf: `applied` of them.
// Throws InputError naming the lookups with an exponent > 0 that were not
// (their indices are computed by an earlier op of the trace, or the op is
// not replayed): replaying them uniform would time another workload.
int64_t checkIndexDistributions(const std::unordered_map<core::NodeId, core::IndexLaw>& asked,
                                const std::unordered_set<core::NodeId>& applied);

}  // namespace tracetwin::replay
