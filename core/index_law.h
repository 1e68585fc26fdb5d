// How an embedding lookup's indices are drawn (`--index-distribution`,
// predictors/specs/index_distribution_spec.h): uniform, or Zipf, where row i
// of the looked-up rows has probability proportional to
// (first_row + i + 1)^-zipf. first_row > 0 is a row-wise shard that holds
// rows [first_row, first_row + rows) of a Zipf table: the law's tail, whose
// hottest row is the table's row first_row, flatter than a Zipf law over
// the shard alone (the sweep's later shards: sweep/index_side_file.h).
// Shared by the predictor's index-reuse histograms and the replay's value
// generators.
#pragma once

#include <cstdint>

namespace tracetwin::core {

struct IndexLaw {
  IndexLaw() = default;
  // Implicit from an exponent: a Zipf law over the rows themselves.
  IndexLaw(double exponent, int64_t first = 0) : zipf(exponent), first_row(first) {}  // NOLINT

  double zipf = 0;        // the exponent s; 0: uniform
  int64_t first_row = 0;  // the table's row the drawn rows start at (Zipf only)

  bool operator==(const IndexLaw& o) const { return zipf == o.zipf && first_row == o.first_row; }
  bool operator!=(const IndexLaw& o) const { return !(*this == o); }
};

}  // namespace tracetwin::core
