// The step, op by op, in the order PyTorch 1.13 runs and records it
// (scripts/workloads/dlrm_sweep.py captured with capture.py --nproc 2):
// zero_grad, the tables' embedding_bag, the all_to_all of pooled vectors,
// the dense forward, BCE, autograd's backward (the top MLP, the
// interaction's CatBackward, the bottom MLP, the all_to_all of gradients,
// embedding_bag backward and AccumulateGrad per table), the all-reduce of
// the dense gradients in one flat bucket, SGD.
#include "sweep/step_trace.h"

#include <fmt/core.h>

#include <cmath>
#include <map>
#include <numeric>

#include "core/aten_schemas.h"
#include "core/errors.h"
#include "core/trace_reader.h"
#include "core/zipf_weights.h"
#include "sweep/step_builder.h"

namespace tracetwin::sweep {

double rowsShare(const TableSpec& table, int64_t x) {
  if (x <= 0) return 0;
  if (x >= table.rows) return 1;
  if (!table.zipf) return double(x) / double(table.rows);
  const core::ZipfWeights weights(*table.zipf);
  return weights.sum(x) / weights.sum(table.rows);
}

std::vector<Shard> planShards(const SweepSpec& spec, const std::vector<Placement>& place) {
  if (place.size() != spec.tables.size()) {
    throw UsageError(fmt::format("{}: a plan places {} tables, the file has {}", spec.source,
                                 place.size(), spec.tables.size()));
  }
  std::vector<Shard> out;
  const int64_t bags = spec.world_size * spec.batch_size;
  for (size_t t = 0; t < place.size(); ++t) {
    const Placement& p = place[t];
    const TableSpec& tab = spec.tables[t];
    const int64_t K = int64_t(p.ranks.size());
    if (K == 0 || (p.kind == Sharding::kTableWise && K != 1)) {
      throw UsageError(
          fmt::format("{}: table '{}' is placed on {} ranks", spec.source, tab.name, K));
    }
    for (int r : p.ranks) {
      if (r < 0 || r >= spec.world_size) {
        throw UsageError(
            fmt::format("{}: rank {} out of range 0..{}", spec.source, r, spec.world_size - 1));
      }
    }
    if ((p.kind == Sharding::kRowWise && tab.rows < K) ||
        (p.kind == Sharding::kColumnWise && tab.dim < K)) {
      throw UsageError(fmt::format("{}: table '{}' is too small to split over {} ranks",
                                   spec.source, tab.name, K));
    }
    const int64_t lookups = bags * tab.pooling;
    int64_t row = 0, col = 0;
    for (int64_t k = 0; k < K; ++k) {
      Shard sh;
      sh.table = int(t);
      sh.kind = p.kind;
      sh.rank = p.ranks[size_t(k)];
      sh.index = int(k);
      sh.rows = tab.rows;
      sh.dim = tab.dim;
      sh.bags = bags;
      sh.lookups = lookups;
      if (p.kind == Sharding::kRowWise) {
        sh.row_begin = row;
        sh.rows = tab.rows / K + (k < tab.rows % K ? 1 : 0);
        row += sh.rows;
        // The indices that fall in its rows, rounded so the shards' counts sum to all.
        sh.lookups = std::llround(double(lookups) * rowsShare(tab, row)) -
                     std::llround(double(lookups) * rowsShare(tab, sh.row_begin));
      } else if (p.kind == Sharding::kColumnWise) {
        sh.col_begin = col;
        sh.dim = tab.dim / K + (k < tab.dim % K ? 1 : 0);
        col += sh.dim;
      } else if (p.kind == Sharding::kDataParallel) {
        sh.bags = spec.batch_size;
        sh.lookups = spec.batch_size * tab.pooling;
      }
      out.push_back(sh);
    }
  }
  return out;
}

RankStep buildRankStep(const SweepSpec& spec, const std::vector<Placement>& place, int rank) {
  if (rank < 0 || rank >= spec.world_size) {
    throw UsageError(
        fmt::format("{}: rank {} out of range 0..{}", spec.source, rank, spec.world_size - 1));
  }
  return StepBuilder(spec, place, rank).build();
}

RankStep buildRankStep(const SweepSpec& spec, const std::vector<int>& owner, int rank) {
  if (owner.size() != spec.tables.size()) {
    throw UsageError(fmt::format("{}: a plan assigns {} tables, the file has {}", spec.source,
                                 owner.size(), spec.tables.size()));
  }
  return buildRankStep(spec, tableWise(owner), rank);
}

core::Graph rankGraph(const RankStep& step, const std::string& source_name) {
  return core::parseTrace(step.trace.dump(), source_name);
}

}  // namespace tracetwin::sweep
