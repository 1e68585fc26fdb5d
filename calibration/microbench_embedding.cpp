// Embedding microbenchmarks: embedding_bag (sum pooling, as DLRM records it,
// with the _embedding_bag_backward autograd runs for dense tables) and plain
// embedding (+ embedding_backward) over batch, rows, pooling, dim and index
// reuse. Reuse is controlled through the node's tensor_range attribute:
// replay's value generator draws indices uniformly from [0, hot_rows), so
// fewer hot rows mean more reuse (the same knob a Zipf-like hot set turns).
// Zipf points (embedding_bag, exponents kZipfExponents over the whole table)
// draw the indices as a skewed table's are (MicrobenchCase::zipf): a hot set
// hits each hot row alike, a Zipf table a few rows very often and a long tail
// once, and the model is checked on the latter (docs/calibration.md).
#include <fmt/core.h>

#include <algorithm>

#include "calibration/graph_builder.h"
#include "calibration/microbench.h"
#include "core/aten_schemas.h"

namespace tracetwin::calibration {
namespace {

using core::DType;
using B = GraphBuilder;

const std::vector<int64_t> kEmbeddingBatch = {8, 32, 128, 512, 2048};
// Half-decade steps: a dense backward zero-fills and writes the whole
// rows x dim gradient, so its time follows the table size closely.
const std::vector<int64_t> kEmbeddingRows = {1000, 3000, 10000, 30000, 100000, 300000, 1000000};
const std::vector<int64_t> kDim = {8, 16, 32, 64, 128};
const std::vector<int64_t> kPooling = {1, 4, 10, 20, 50};
// Hot-row fraction of the table the indices hit: 1 = uniform over all rows.
const std::vector<double> kHotFraction = {1.0, 0.1, 0.01, 0.0};  // 0: 64 hot rows
// Zipf exponents of the skewed embedding_bag points: DLRM-style tables are
// fitted at 1.05-1.2 (and the sweep's example uses 1.1).
const std::vector<double> kZipfExponents = {1.05, 1.2};
// The sparse-gradient bag points: uniform (0) and the Zipf exponents.
const std::vector<double> kSparseZipfExponents = {0.0, 1.05, 1.2};
constexpr int64_t kMaxTableBytes = int64_t{64} << 20;
constexpr int64_t kMaxLookups = 100000;
// DLRM tables past the last-level cache looked up at production poolings
// (40-80 indices a bag over a global batch): anchors, measured first in every
// calibration. The grid above stops at 40,960 lookups and a random sample of
// it holds few tables that miss the caches, so the trees held such tables at
// the cache-resident rate: a sweep's 500,000 x 32 table looked up 81,920
// times a step was predicted at 465 us forward and 238 us backward against
// 1,107 and 735 us replayed (docs/sweeps.md).
struct LargeTable {
  int64_t rows, dim;
};
const std::vector<LargeTable> kLargeTables = {{500000, 32}, {1000000, 16}, {250000, 64}};
const std::vector<int64_t> kLargePooling = {40, 80};
constexpr int64_t kLargeBatch = 2048;
// Token embeddings of language models: sequences of tokens over vocabularies
// at model widths the DLRM grid above (dim <= 128) does not reach. The H100
// decoder and encoder steps' embedding_backward (4,096 tokens, 8,192 x 512)
// were predicted at 2.3-2.8x their kernels, extrapolated from dim 128.
const std::vector<int64_t> kTokenSequences = {4, 16, 64};  // batch
const std::vector<int64_t> kTokenLength = {128, 512, 2048};
const std::vector<int64_t> kVocabulary = {8192, 32000, 50304};
const std::vector<int64_t> kModelWidth = {256, 512, 1024};
constexpr int64_t kMaxTokenTableBytes = int64_t{128} << 20;

using core::schemas::kEmbeddingBag;
using core::schemas::kEmbeddingBagBackward;
constexpr const char* kEmbedding =
    "aten::embedding(Tensor weight, Tensor indices, int padding_idx=-1, bool "
    "scale_grad_by_freq=False, bool sparse=False) -> Tensor";
constexpr const char* kEmbeddingBackward =
    "aten::embedding_backward(Tensor grad, Tensor indices, SymInt num_weights, int padding_idx, "
    "bool scale_grad_by_freq, bool sparse) -> Tensor";

struct EmbPoint {
  int64_t batch, rows, dim, pooling, hot;
  bool bag;
  double zipf = 0;  // > 0: indices Zipf over the whole table (hot == rows)
  // embedding_bag(sparse=True) and its sparse backward (a COO gradient of the
  // looked-up rows, no rows x dim zero-fill), as a DLRM step with sparse
  // gradients runs them; only the uniform and Zipf bag points.
  bool sparse = false;
  int64_t lookups() const { return batch * pooling; }
};

std::string rangeAttr(int64_t hot) { return fmt::format("{{\"1\": [0, {}]}}", hot - 1); }

void addBagPair(B& b, const EmbPoint& p, DType dt) {
  const DType i64 = DType::kInt64;
  auto indices = b.tensor({p.lookups()}, i64);
  auto offsets = b.tensor({p.batch}, i64);
  // CPU sum pooling returns an empty offset2bag; CUDA one entry per index.
  const int64_t o2b = b.device() == "cpu" ? 0 : p.lookups();
  auto offset2bag = b.tensor({o2b}, i64);
  auto bag_size = b.tensor({p.batch}, i64);
  auto max_indices = b.tensor({p.batch}, i64);
  b.op(kEmbeddingBag,
       {b.tensor({p.rows, p.dim}, dt), indices, offsets, B::boolValue(false), B::intValue(0),
        B::boolValue(p.sparse), B::none(), B::boolValue(false), B::none()},
       {b.tensor({p.batch, p.dim}, dt), offset2bag, bag_size, max_indices}, rangeAttr(p.hot));
  b.op(kEmbeddingBagBackward,
       {b.tensor({p.batch, p.dim}, dt), indices, offsets, offset2bag, bag_size, max_indices,
        B::intValue(p.rows), B::boolValue(false), B::intValue(0), B::boolValue(p.sparse),
        b.undefinedTensor(), B::intValue(-1)},
       {b.tensor({p.rows, p.dim}, dt)});
}

void addEmbeddingPair(B& b, const EmbPoint& p, DType dt) {
  auto indices = b.tensor({p.batch, p.pooling}, DType::kInt64);
  b.op(kEmbedding,
       {b.tensor({p.rows, p.dim}, dt), indices, B::intValue(-1), B::boolValue(false),
        B::boolValue(false)},
       {b.tensor({p.batch, p.pooling, p.dim}, dt)}, rangeAttr(p.hot));
  b.op(kEmbeddingBackward,
       {b.tensor({p.batch, p.pooling, p.dim}, dt), indices, B::intValue(p.rows), B::intValue(-1),
        B::boolValue(false), B::boolValue(false)},
       {b.tensor({p.rows, p.dim}, dt)});
}

MicrobenchCase embeddingCase(const GridOptions& grid, const EmbPoint& p, DType dt) {
  const std::string label =
      fmt::format("{} b={} rows={} d={} l={} {}{} {}", p.bag ? "embedding_bag" : "embedding",
                  p.batch, p.rows, p.dim, p.pooling,
                  p.zipf > 0 ? fmt::format("zipf={}", p.zipf) : fmt::format("hot={}", p.hot),
                  p.sparse ? " sparse" : "", dtypeLabel(dt));
  const double item = static_cast<double>(core::dtypeItemsize(dt));
  const double gathered = static_cast<double>(p.lookups() * p.dim) * item;
  const double table = static_cast<double>(p.rows * p.dim) * item;
  // Forward gathers; backward zero-fills the whole table gradient (a sparse
  // one only copies the gathered rows), sorts the indices and scatters.
  const double pair_us = estimateOpUs(0, 1, gathered + p.lookups() * 8.0) +
                         estimateOpUs(0, 1, (p.sparse ? 0.0 : table) + 3 * gathered +
                                                p.lookups() * 24.0);
  MicrobenchCase c = repeatedCase(grid, "embedding_bag", label, pair_us, [=](B& b) {
    p.bag ? addBagPair(b, p, dt) : addEmbeddingPair(b, p, dt);
  });
  if (p.zipf <= 0) c.index_reuse = uniformReuseHistogram(p.lookups(), p.hot);
  c.zipf = p.zipf;
  // Every embedding case, uniform and hot-set ones alike, so that a Zipf
  // point's ratio to a uniform one is measured as a step sees it: a refill
  // rewrote the whole table before each lookup, and the hot rows of a Zipf
  // table were not where the previous lookup left them (a Zipf lookup 0.69-0.76x
  // a uniform one so, 0.35-0.62x inside a step).
  c.refill = UnitRefill::kIndices;
  return c;
}

}  // namespace

std::vector<MicrobenchCase> embeddingCases(const GridOptions& grid) {
  std::vector<MicrobenchCase> cases;
  for (DType dt : grid.dtypes) {
    for (int64_t batch : kEmbeddingBatch) {
      for (int64_t rows : kEmbeddingRows) {
        for (int64_t dim : kDim) {
          if (rows * dim * core::dtypeItemsize(dt) > kMaxTableBytes) continue;
          for (int64_t pooling : kPooling) {
            if (batch * pooling > kMaxLookups) continue;
            for (double hot_fraction : kHotFraction) {
              const int64_t hot =
                  hot_fraction > 0 ? std::max<int64_t>(1, static_cast<int64_t>(rows * hot_fraction))
                                   : std::min<int64_t>(64, rows);
              for (bool bag : {true, false}) {
                // Plain embedding is a rarer op (token embeddings): a
                // quarter of the grid keeps its share of the budget small.
                if (!bag && (pooling == 50 || hot_fraction == 0.01)) continue;
                cases.push_back(embeddingCase(grid, {batch, rows, dim, pooling, hot, bag}, dt));
              }
            }
            for (double s : kZipfExponents) {
              cases.push_back(embeddingCase(grid, {batch, rows, dim, pooling, rows, true, s}, dt));
            }
            // Sparse gradients: uniform and Zipf. With no rows x dim gradient
            // written between two lookups, a Zipf table's hot rows stay
            // cached from one step to the next, as in a DLRM step with
            // sparse gradients (docs/calibration.md).
            for (double s : kSparseZipfExponents) {
              cases.push_back(
                  embeddingCase(grid, {batch, rows, dim, pooling, rows, true, s, true}, dt));
            }
          }
        }
      }
    }
    // The anchors: uniform and Zipf 1.05 with sparse gradients, and uniform
    // with a dense one (its backward writes the whole 64 MB gradient).
    for (const LargeTable& t : kLargeTables) {
      for (int64_t pooling : kLargePooling) {
        const EmbPoint uniform_sparse{kLargeBatch, t.rows, t.dim, pooling, t.rows, true, 0, true};
        EmbPoint zipf_sparse = uniform_sparse;
        zipf_sparse.zipf = 1.05;
        EmbPoint uniform_dense = uniform_sparse;
        uniform_dense.sparse = false;
        for (const EmbPoint& p : {uniform_sparse, zipf_sparse, uniform_dense}) {
          cases.push_back(embeddingCase(grid, p, dt));
          cases.back().anchor = true;
        }
      }
    }
    for (int64_t sequences : kTokenSequences)
      for (int64_t length : kTokenLength)
        for (int64_t vocabulary : kVocabulary)
          for (int64_t width : kModelWidth) {
            if (vocabulary * width * core::dtypeItemsize(dt) > kMaxTokenTableBytes) continue;
            cases.push_back(
                embeddingCase(grid, {sequences, vocabulary, width, length, vocabulary, false}, dt));
          }
  }
  return cases;
}

}  // namespace tracetwin::calibration
