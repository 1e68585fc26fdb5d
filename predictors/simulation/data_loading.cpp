#include "predictors/simulation/data_loading.h"

#include <fmt/format.h>

#include <algorithm>

namespace tracetwin::predictors {

DataLoadingCharge chargeDataLoading(const core::Graph& graph,
                                    const std::vector<core::NodeId>& data_loaders,
                                    const std::vector<OpRecord>& recs, const OverheadTable& table,
                                    OverheadStatistic stat, double host_scale,
                                    std::vector<SimOp>* sim) {
  DataLoadingCharge charge;
  for (core::NodeId label_id : data_loaders) {
    const core::Node& label = graph.node(label_id);
    ++charge.regions;
    const double us = table.regionUs(label.name, stat);
    if (us < 0) {
      if (charge.missing.empty()) charge.missing = label.name;
      continue;
    }
    // Ids are taken on entry: the ops after the label have larger ids.
    auto after = std::upper_bound(recs.begin(), recs.end(), label_id,
                                  [](core::NodeId id, const OpRecord& r) { return id < r.out.id; });
    for (; after != recs.end(); ++after) {
      if (after->node->tid != label.tid) continue;
      (*sim)[size_t(after - recs.begin())].t1 += us * host_scale;
      ++charge.charged;
      charge.us += us;
      break;
    }
  }
  return charge;
}

std::string dataLoadingNote(const DataLoadingCharge& charge) {
  if (charge.regions == 0) return "";
  if (charge.charged == charge.regions) {
    return fmt::format("data loading: {} DataLoader region(s) charged {:.3f} ms of CPU time, their "
                       "recorded span in the overheads table (their ops are not the model's and "
                       "are not predicted one by one)",
                       charge.regions, charge.us / 1000.0);
  }
  return fmt::format("data loading: {} of {} DataLoader region(s) are not in this prediction (no "
                     "recorded span for '{}' in the overheads table; `tracetwin link "
                     "--overheads-out` of a recorded run of this job carries it): the step is "
                     "predicted without loading its batch",
                     charge.regions - charge.charged, charge.regions, charge.missing);
}

}  // namespace tracetwin::predictors
