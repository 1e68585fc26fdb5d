// The microbenchmark of SGD's sparse update for `calibrate --families
// sparse_add` (calibration/sparse_add_sweep.h): `weight.add_(grad, alpha)`
// with an uncoalesced sparse COO gradient of `nnz` rows of a [rows, dim]
// float32 table, timed in LibTorch (the library the replay runs), each point
// twice per round: right after a lookup of the same rows (warm: the update
// in a small step) and after a stream of `flush_bytes` has evicted the table
// (cold: a step with more tables and a dense part). Rounds interleave every
// point, alternately forward and backward, so a drift of the shared host
// hits all points alike. Torch-free header; without LibTorch the call throws
// UnavailableError.
#pragma once

#include <cstdint>
#include <vector>

namespace tracetwin::replay {

struct SparseAddBenchPoint {
  int64_t rows = 0;
  int64_t dim = 0;
  int64_t nnz = 0;  // lookups: the gradient's entries
  double zipf = 0;  // 0: indices uniform over the rows; > 0: row i ∝ (i+1)^-zipf
};

struct SparseAddBenchOptions {
  int rounds = 5;
  // Twice this host's 32 MiB last-level cache, as the Python script used.
  int64_t flush_bytes = int64_t{64} << 20;
  uint64_t seed = 36;
  int threads = 0;  // intra-op threads (0: LibTorch's default)
};

struct SparseAddBenchTimes {
  int64_t unique = 0;            // distinct rows among the drawn indices
  std::vector<double> warm_us;   // one per round
  std::vector<double> cold_us;
};

// One entry per point, in order. Throws UnavailableError without LibTorch.
std::vector<SparseAddBenchTimes> measureSparseAdd(const std::vector<SparseAddBenchPoint>& points,
                                                  const SparseAddBenchOptions& options);

}  // namespace tracetwin::replay
