// The cost of SGD's sparse update, `weight.add_(grad, alpha)` with the
// uncoalesced sparse COO gradient of embedding_bag's sparse backward
// (core/sparse_layout.h). PyTorch first coalesces the gradient (sorts its nnz
// row indices, sums the values of duplicate rows), then adds each distinct
// row into the table. Costed as the dense add of [nnz, dim] it was 27.9 us on
// data/embbag_sparse against 314 us replayed: the coalesce is most of it, and
// it depends on how many rows are distinct, i.e. on the index distribution
// (a Zipf table's gradient has far fewer).
//
// An analytic term calibrated from measured points: `tracetwin calibrate
// --families sparse_add` measures the op in LibTorch over tables, dims,
// non-zero counts and index distributions (calibration/sparse_add_sweep.h)
// and fits the coefficients of the terms below by non-negative least squares
// (sparse_add_fit.h) into MODELS/sparse_add.json (docs/calibration.md, "The
// sparse optimizer step").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tracetwin::predictors {

struct SparseAddShape {
  double nnz = 0;     // the gradient's entries (lookups)
  double dim = 0;     // each row's width
  double rows = 0;    // the table's rows
  double unique = 0;  // distinct rows among the nnz
};

// One fit of the terms: a warm table (the update right after the lookup of
// its rows) or an evicted one.
struct SparseAddTerms {
  std::vector<double> coefficients_us;  // per term
  double values_cache_bytes = 0;
  double table_cache_bytes = 0;
  double predictUs(const SparseAddShape& s) const;
};

class SparseAddModel {
 public:
  static constexpr const char* kFileName = "sparse_add.json";
  // The terms, in the file's order: the call; the indices' sort
  // (nnz log2 nnz); the values' gather and duplicate sums (nnz*dim) and their
  // part beyond the cache; per distinct row, its read-modify-write and the
  // part where the table outgrows the cache (miss = max(0, 1 - cache/bytes)).
  static const std::vector<std::string>& terms();

  bool empty() const { return warm.coefficients_us.empty(); }
  // warm + cold_fraction * (cold - warm): cold_fraction is the share of the
  // table the step's cache model finds evicted at the update
  // (OpFeatures::cold_bytes over the table's bytes).
  double predictUs(const SparseAddShape& s, double cold_fraction) const;

  // DIR/sparse_add.json when present (an empty model otherwise); a bad file
  // is an InputError naming it.
  static SparseAddModel loadFrom(const std::string& dir);
  static SparseAddModel fromJson(const nlohmann::json& j, const std::string& source);
  // Writes DIR/sparse_add.json (the fitted terms; the measured points are the
  // calibration script's to keep).
  void saveTo(const std::string& dir) const;

  SparseAddTerms warm, cold;
  nlohmann::json provenance;  // points, fit errors, load, torch version
};

// The terms' values at a shape (SparseAddModel::terms() order), with the
// values' and the table's cache sizes the fit chose: what the predictor sums
// and what the calibration's fit regresses on (sparse_add_fit.h).
std::vector<double> sparseAddTermValues(const SparseAddShape& s, double values_cache_bytes,
                                        double table_cache_bytes);

// Distinct rows expected among `nnz` lookups drawn uniformly from `rows`:
// rows * (1 - exp(-nnz / rows)).
double expectedUniqueRows(double nnz, double rows);

}  // namespace tracetwin::predictors
