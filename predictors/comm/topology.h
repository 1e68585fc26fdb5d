// Collectives on a cluster (configs/systems/*.yaml; docs/prediction.md
// "Topology"): a group inside one node runs on the intra-node link (NVLink,
// PCIe); a group spanning nodes runs hierarchically, an intra-node phase and
// an inter-node phase (InfiniBand, RoCE), each by the alpha-beta terms of
// comm_model.h with alpha = the link's latency and beta = 1 / its bandwidth:
//   all_reduce      intra reduce-scatter(q, n) + inter all-reduce(k, n/q) + intra all-gather(q, n)
//   all_gather      inter all-gather(k, n/q) + intra all-gather(q, n)
//   reduce_scatter  intra reduce-scatter(q, n) + inter reduce-scatter(k, n/q)
//   all_to_all      (q-1) a_intra + (q-1)/p n b_intra + (p-q) a_inter + (p-q)/p n b_inter
//   broadcast       inter broadcast(k, n) + intra broadcast(q, n)
// for p ranks on k nodes, q of them on the fullest node; n is nccl-tests'
// size. Ranks are placed on nodes by the system's placement.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "predictors/kernels/kernel_model.h"
#include "predictors/specs/system_spec.h"

namespace tracetwin::predictors {

struct GroupPlacement {
  int64_t ranks = 0;
  int64_t nodes = 0;     // k
  int64_t per_node = 0;  // q: ranks on the fullest node
};
GroupPlacement placementOf(const SystemSpec& system, const std::vector<int64_t>& members);

// Seconds for `collective` (any spelling) over `members` (global ranks).
double topologySeconds(const SystemSpec& system, const std::string& collective,
                       const std::vector<int64_t>& members, double bytes);

// The comm family's model with a system: a collective of world_size ranks
// runs on ranks 0 .. world_size-1 (the world, or the first ranks).
class TopologyCommModel : public KernelModel {
 public:
  explicit TopologyCommModel(SystemSpec system) : system_(std::move(system)) {}
  std::string kind() const override { return "topology:" + system_.name; }
  double predictUs(const OpFeatures& f, const DeviceSpec& d) const override;
  // Not a fitted model: nothing to save (throws UsageError).
  nlohmann::json save(const std::string& dir, const std::string& stem) const override;

 private:
  SystemSpec system_;
};

}  // namespace tracetwin::predictors
