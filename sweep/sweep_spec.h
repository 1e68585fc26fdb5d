// A sharding what-if sweep (docs/sweeps.md): the DLRM-style job of a sweep
// file (configs/sweeps/*.yaml) and the plans to try, each a table -> rank
// assignment or a strategy that makes some. Read strictly, as the device
// YAML is: unknown keys, wrong types and impossible figures are InputError
// "FILE:LINE:COL: ...".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tracetwin::sweep {

struct TableSpec {
  std::string name;
  int64_t rows = 0;
  int64_t dim = 0;
  int64_t pooling = 0;  // indices per bag
  // Index distribution: nullopt uniform; else row i drawn with probability
  // proportional to (i+1)^-zipf.
  std::optional<double> zipf;
  int64_t bytes() const { return rows * dim * 4; }  // float32 weights
};

struct DenseSpec {
  int64_t features = 13;
  std::vector<int64_t> bottom_mlp{64, 32};  // Linear + ReLU each
  std::vector<int64_t> top_mlp{64, 1};      // Linear + ReLU each, the last without ReLU
};

// How a plan places one table (docs/sweeps.md, "Sharding"), after TorchRec:
// table-wise on one rank; row-wise (each of `ranks` holds a row range and
// looks up the global batch's indices in it; the partial pooled sums are
// summed on the samples' ranks); column-wise (each holds a slice of dim for
// every row); data-parallel (every rank holds all of it and looks up only
// its own samples; its dense gradient is all-reduced with the dense part).
enum class Sharding : uint8_t { kTableWise, kRowWise, kColumnWise, kDataParallel };
struct Placement {
  Sharding kind = Sharding::kTableWise;
  std::vector<int> ranks;  // table-wise: {rank}; else the shards' ranks in order (all for DP)
  bool operator==(const Placement& o) const { return kind == o.kind && ranks == o.ranks; }
  bool operator<(const Placement& o) const {
    return kind != o.kind ? kind < o.kind : ranks < o.ranks;
  }
};
// "0" (table-wise on rank 0), "rw:0+1", "cw:0+1", "dp": the codes `sweep
// --json-out` writes per table and scripts/workloads/dlrm_sweep.py's
// --param assign takes.
std::string placementCode(const Placement& p);
// Every table table-wise: owner[t] is its rank.
std::vector<Placement> tableWise(const std::vector<int>& owner);

// The most ranks a sweep file may have. A sweep builds and simulates every
// rank of a plan, and each rank's all-to-all names every peer: one plan of
// 1,024 ranks took 43 s and 1.2 GB on a 2-core host, 4,096 over a minute
// and 4.6 GB, and one of 100,000 ranks had grown past 2.6 GB within 20 s:
// a typo's zeros should be an error, not a host out of memory.
inline constexpr int64_t kMaxSweepRanks = 4096;

// The most plans one random-search entry may ask for (its `count`): a
// million table-wise plans take minutes to predict on a 2-core host (10,000
// take about one second), and a typo of a few zeros should be an error, not
// an hour.
inline constexpr int64_t kMaxRandomPlans = 1'000'000;

struct PlanSpec {
  std::string name;
  std::string strategy;  // "explicit" (assign), "round_robin", "greedy", "greedy_size", "random"
  std::vector<int> assign;  // explicit: rank per table, in the file's table order (-1: split)
  // explicit: every table's placement when a table is not table-wise; else empty.
  std::vector<Placement> place;
  int64_t count = 1;        // random: how many plans
  uint64_t seed = 0;        // random
  int line = 0;             // where the plan is in the file (messages)
};

struct SweepSpec {
  std::string source;  // the file, for messages
  int64_t world_size = 0;
  int64_t batch_size = 0;  // samples per rank per step
  bool sparse_grad = true;
  DenseSpec dense;
  std::vector<TableSpec> tables;
  std::vector<PlanSpec> plans;
  std::string device;  // "" or "cpu": the models' device; else a device spec path
  std::string system;  // optional configs/systems/*.yaml
  // Per-rank memory for tables, their gradients and optimizer state; 0: the
  // target device's memory (its spec), unknown when neither is given.
  int64_t memory_bytes = 0;
  double lr = 0.01;  // SGD learning rate (the optimizer's add_ alpha)
};

// The strategies a plan may name, for messages and the docs.
const std::vector<std::string>& strategyNames();

SweepSpec loadSweepSpec(const std::string& path);
SweepSpec parseSweepSpec(const std::string& yaml_text, const std::string& source);

}  // namespace tracetwin::sweep
