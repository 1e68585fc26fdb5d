// Microbenchmarks: small hand-built graphs, one op family each, swept over
// grids of shapes. A name-keyed registry (microbench_registry.cpp) lists the
// families; each family's grid lives in its own microbench_<family>.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/value.h"

namespace tracetwin::calibration {

struct GridOptions {
  std::string device = "cpu";  // written into the graphs' tensors
  // Floating dtypes swept (CPU: float32; CUDA adds float16 and bfloat16).
  std::vector<core::DType> dtypes = {core::DType::kFloat32};
  // A GPU: the GEMM and conv grids add the sizes that keep one busy (GEMMs to
  // 8192, conv batches to 256), and budget estimates divide the CPU rates
  // below by kAcceleratorSpeedup. The CPU grids stop where a 2-core host
  // takes ~0.1 s per point, far below where an H100 reaches its peak.
  bool accelerator = false;
};

// `values`, followed by `more` on an accelerator: a grid axis that a GPU
// extends past the CPU's sizes.
template <typename T>
std::vector<T> withAccelerator(std::vector<T> values, const std::vector<T>& more,
                               bool accelerator) {
  if (accelerator) values.insert(values.end(), more.begin(), more.end());
  return values;
}

// How much faster than the CPU rates below an accelerator is assumed to run
// an op's body, for budgeting only (the run loop rescales with what it
// measures): on the H100 of docs/gpu.md, float32 GEMMs ran ~10,000x the
// rate above (51.6 TFLOP/s) and copies ~375x (3.0 TB/s); small ops gain far
// less, so the middle.
inline constexpr double kAcceleratorSpeedup = 500;

class GraphBuilder;

// What a unit's replay does to its inputs between measured iterations.
enum class UnitRefill {
  // Refills every input (the replay's upfront values), then times the next
  // iteration at once (settle_iters 0). Most cases: they set up their own
  // cache state, and an op that streams its whole input finds it as a
  // refill leaves it.
  kAll,
  // Refills every input, runs one untimed iteration, then the timed one
  // (settle_iters 1, as a replayed step).
  kSettle,
  // Draws the integer inputs (embedding indices, offsets) anew and leaves
  // the rest as the previous iteration left them
  // (replay::ReplayOptions::fresh_indices): an embedding table keeps its hot
  // rows cached as a step's table does from one batch to the next. The
  // embedding cases (docs/calibration.md, "Embedding index reuse").
  kIndices,
};
const char* unitRefillName(UnitRefill r);

// One grid point: a graph holding `repeats` copies of the op(s) under test.
struct MicrobenchCase {
  std::string family;  // registry name (= core::opFamily of its main op)
  std::string label;   // "mm m=64 n=128 k=32 float32"
  double est_us = 0;   // rough time of one replayed iteration, for budgeting
  std::function<core::Graph()> build;
  // One copy of the op(s) under test and its rough time: what the calibrator
  // interleaves with other small cases (see calibrator.cpp). Set by
  // repeatedCase; empty for cases that only run on their own.
  std::function<void(GraphBuilder&)> add_copy;
  double copy_us = 0;
  // Embedding cases only: index-reuse histogram (predictors::kReuseBins
  // bins) of the indices replay generates for every embedding op of the case.
  std::vector<double> index_reuse;
  // Embedding cases only: > 0 draws every lookup's indices Zipf with this
  // exponent (replay::ReplayOptions::index_zipf, over the rows tensor_range
  // allows). index_reuse is then left empty: each measured row gets the
  // histogram of its op's table and lookups (predictors::zipfReuseHistogram,
  // a million powers for a million-row table, computed for measured points
  // only; replay_unit.cpp).
  double zipf = 0;
  // What the replay rewrites before each measured iteration (UnitRefill).
  UnitRefill refill = UnitRefill::kAll;
  // Measured first in every sweep, whatever the budget (orderForSweep): a
  // point that bounds the family's features where its trees would otherwise
  // extrapolate (the conv grid's largest native-path weights).
  bool anchor = false;
};

struct MicrobenchFamily {
  std::string name;          // "gemm"
  std::string description;   // one line for help and reports
  double budget_weight = 1;  // share of the calibration budget
  std::function<std::vector<MicrobenchCase>(const GridOptions&)> cases;
};

const std::vector<MicrobenchFamily>& microbenchRegistry();
// Throws UsageError listing the known families when `name` is unknown.
const MicrobenchFamily& microbenchFamily(const std::string& name);
std::vector<std::string> microbenchFamilyNames();

// Grids, one function per family (microbench_<family>.cpp).
std::vector<MicrobenchCase> gemmCases(const GridOptions& grid);
std::vector<MicrobenchCase> convCases(const GridOptions& grid);
std::vector<MicrobenchCase> embeddingCases(const GridOptions& grid);
std::vector<MicrobenchCase> elementwiseCases(const GridOptions& grid);
std::vector<MicrobenchCase> reductionCases(const GridOptions& grid);
std::vector<MicrobenchCase> softmaxCases(const GridOptions& grid);
std::vector<MicrobenchCase> normCases(const GridOptions& grid);
std::vector<MicrobenchCase> copyCases(const GridOptions& grid);
std::vector<MicrobenchCase> viewCases(const GridOptions& grid);

// --- helpers shared by the grids -------------------------------------------

// Rough single-thread CPU rates of this project's 2-core build host (reference
// BLAS mm ~4 GFLOP/s, oneDNN conv ~30 GFLOP/s, copy ~8 GB/s each way); only
// used to budget, the run loop rescales them with what it measures.
inline constexpr double kEstGemmFlops = 4e9;
inline constexpr double kEstConvFlops = 2.5e10;
inline constexpr double kEstBytesPerS = 8e9;
inline constexpr double kEstOpUs = 6.0;  // dispatcher + replay loop per op

double estimateOpUs(double flops, double flop_rate, double bytes);

class GraphBuilder;
// A case whose graph holds repeatsFor(copy_us) copies of what `add` builds,
// separated by spacers so no copy reuses the previous one's cache-hot output.
// `copy_us` is the rough time of one copy, for budgeting.
MicrobenchCase repeatedCase(const GridOptions& grid, std::string family, std::string label,
                            double copy_us, std::function<void(GraphBuilder&)> add);
// Copies of the op per graph: enough that one iteration lasts ~0.5 ms (so
// the fixed per-replay cost is amortised), at most 8, at least 1.
int repeatsFor(double op_us);
// "float32" etc.
std::string dtypeLabel(core::DType dtype);
// c10::ScalarType's number of a floating dtype, as a trace records a
// `ScalarType dtype` argument (aten::to, softmax's dtype): Float 6, Double 7,
// Half 5, BFloat16 15.
int64_t scalarTypeCode(core::DType dtype);
// Shape with `numel` elements, 2-D [rows, cols] with cols a power of two <= 1024.
std::vector<int64_t> matrixShape(int64_t numel);

// Reuse histogram for `lookups` indices drawn uniformly from `rows` rows:
// fraction of touched rows whose access count falls in (0,1], (1,2], (2,4],
// ..., (64,inf) — 8 bins, matching predictors::kReuseBins.
std::vector<double> uniformReuseHistogram(int64_t lookups, int64_t rows);

}  // namespace tracetwin::calibration
