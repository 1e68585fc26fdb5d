#include "replay/zipf_indices.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

#include "core/errors.h"
#include "core/zipf_weights.h"

namespace tracetwin::replay {

ZipfCdf::ZipfCdf(int64_t rows, double exponent, int64_t first_row) : exponent_(exponent) {
  if (rows <= 0) throw UsageError("a Zipf index distribution needs at least one row");
  if (first_row < 0 || first_row > std::numeric_limits<int64_t>::max() - rows - 1) {
    throw UsageError("a Zipf shard's first row must be >= 0 and its last row within 2^63-1");
  }
  const core::ZipfWeights weights(exponent, first_row);  // relative: no underflow
  cdf_.resize(size_t(rows));
  double sum = 0;  // ascending i: the large terms first, then the tail
  for (int64_t i = 0; i < rows; ++i) {
    sum += weights.term(double(i + 1));
    cdf_[size_t(i)] = sum;
  }
  for (double& c : cdf_) c /= sum;
  cdf_.back() = 1.0;  // u < 1 always finds a row
}

std::shared_ptr<const ZipfCdf> ZipfCdf::of(int64_t rows, double exponent, int64_t first_row) {
  static std::mutex mutex;
  static std::map<std::tuple<int64_t, double, int64_t>, std::shared_ptr<const ZipfCdf>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[{rows, exponent, first_row}];
  if (!slot) slot = std::make_shared<const ZipfCdf>(rows, exponent, first_row);
  return slot;
}

int64_t ZipfCdf::row(double u) const {
  const auto it = std::upper_bound(cdf_.begin(), cdf_.end(), u);
  return std::min<int64_t>(int64_t(it - cdf_.begin()), rows() - 1);
}

double ZipfCdf::probability(int64_t i) const {
  if (i < 0 || i >= rows()) return 0;
  return cdf_[size_t(i)] - (i > 0 ? cdf_[size_t(i - 1)] : 0.0);
}

void zipfRowsFromUniforms(const ZipfCdf& cdf, int64_t low, const double* uniforms, int64_t n,
                          int64_t* out) {
  for (int64_t k = 0; k < n; ++k) out[k] = low + cdf.row(uniforms[k]);
}

int64_t checkIndexDistributions(const std::unordered_map<core::NodeId, core::IndexLaw>& asked,
                                const std::unordered_set<core::NodeId>& applied) {
  std::vector<core::NodeId> missed;
  int64_t drawn = 0;
  for (const auto& [id, law] : asked) {
    if (applied.count(id)) {
      ++drawn;
    } else if (law.zipf > 0) {
      missed.push_back(id);
    }
  }
  if (!missed.empty()) {
    std::sort(missed.begin(), missed.end());
    throw InputError(fmt::format(
        "--index-distribution: the indices of op(s) {} cannot be drawn Zipf: the replay does not "
        "make them (an earlier op of the trace computes them, or the op is not replayed)",
        fmt::join(missed, ", ")));
  }
  return drawn;
}

}  // namespace tracetwin::replay
