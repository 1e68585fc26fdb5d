// The side file of `replay`/`compare --index-distribution FILE`: which
// embedding lookups of a trace draw their indices from which distribution
// (docs/calibration.md, "Index distributions"). A trace records an indices
// tensor's shape, not its values, so a replay draws them uniform unless told;
// a Zipf table hits far fewer distinct rows and runs much faster. Strict YAML
// like the device and sweep files (unknown keys are errors with
// file:line:col):
//
//   tables:
//     - {node: 42, zipf: 1.05}                  # the lookup op with this id
//     - {rows: 200000, dim: 32, zipf: 1.2}      # every lookup of a [200000, 32] weight
//     - {rows: 5000, name: t3}                  # uniform (no zipf); name is a label only
//     - {node: 57, zipf: 1.2, first_row: 100000}  # rows from 100,000 on of a Zipf table
//
// `first_row` (with `zipf`): the lookup's rows are a row-wise shard, rows
// [first_row, first_row + rows) of a Zipf table, drawn by that law's tail
// (core/index_law.h): the sweep writes it for every shard after the first.
//
// A lookup is aten::embedding, embedding_bag, _embedding_bag or
// _embedding_bag_forward_only. A node rule wins over a shape rule; `dim`
// left out matches any width. Torch-free: the replayer takes the resolved
// exponents (ReplayOptions::index_zipf), the predictor their index-reuse
// histograms.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/graph.h"
#include "core/index_law.h"

namespace tracetwin::predictors {

struct IndexDistributionRule {
  core::NodeId node = core::kNoNode;  // set: this lookup op only
  int64_t rows = 0;                   // else: lookups of a weight with this many rows
  int64_t dim = 0;                    // ... and this width (0: any)
  double zipf = 0;                    // exponent s: row i ~ (i+1)^-s; 0: uniform
  int64_t first_row = 0;              // a shard's first row of the Zipf table (core/index_law.h)
  std::string name;                   // a label for people (the sweep's table name)
  std::string where;                  // "FILE:LINE:COL" of the entry, for messages
};

struct IndexDistributionSpec {
  std::string source;
  std::vector<IndexDistributionRule> tables;
};

// Throws InputError "FILE:LINE:COL: ..." on a bad file: unknown keys, neither
// or both of node and rows, dim without rows, a negative or non-numeric
// exponent, first_row without zipf or negative, a node or a (rows, dim) given
// twice.
IndexDistributionSpec parseIndexDistributions(const std::string& text, const std::string& source);
IndexDistributionSpec loadIndexDistributions(const std::string& path);

struct ResolvedIndexDistributions {
  // The law of each lookup a rule matched, by op id (outermost lookups
  // only: embedding_bag's child _embedding_bag shares its indices).
  std::unordered_map<core::NodeId, core::IndexLaw> lookups;
  // Every op that reads one of those lookups' indices (the lookup, its
  // children, its backward), with the lookup's rows and lookups: what its
  // index-reuse histogram is computed from.
  struct Reader {
    double exponent = 0;
    int64_t first_row = 0;
    int64_t rows = 0;
    int64_t lookups = 0;  // indices per call
  };
  std::unordered_map<core::NodeId, Reader> readers;
  // Shape rules that matched no lookup of this graph ("FILE:L:C: rows x dim"):
  // a note, since one file can serve the ranks of a job, each holding some
  // tables.
  std::vector<std::string> unmatched;
};

// Matches the rules against `graph`'s lookups. Throws InputError when a node
// rule names an op that is not an embedding lookup (or is absent).
ResolvedIndexDistributions resolveIndexDistributions(const IndexDistributionSpec& spec,
                                                     const core::Graph& graph);

// The index-reuse histograms (PredictOptions::index_reuse) of the resolved
// readers with an exponent > 0 (uniform ones keep the predictor's own).
std::unordered_map<core::NodeId, std::vector<double>> indexReuseOf(
    const ResolvedIndexDistributions& resolved);

}  // namespace tracetwin::predictors
