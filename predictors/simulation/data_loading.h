// Data loading in a step. The selection drops the ops under a DataLoader
// label (DESIGN.md "Operator selection": they fetch the next batch, they are
// not the model's work), but their time is the step's: 1.0-1.4 ms of each
// DLRM rank's 12.5-19.9 ms, which every rank's prediction lacked (4-10% under
// its recorded step). A linked trace's overheads table carries each label's
// recorded span ("regions", core/kineto/overheads.h); it is charged as CPU
// time on the label's thread, in the gap before the first op after it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.h"
#include "predictors/host/overheads.h"
#include "predictors/simulation/critical_path.h"
#include "predictors/simulation/op_record.h"

namespace tracetwin::predictors {

struct DataLoadingCharge {
  int64_t regions = 0;           // DataLoader labels in the selected iteration
  int64_t charged = 0;           // of them, with a recorded span in the table
  double us = 0;                 // charged in all, before --host-scale
  std::string missing;           // a label without a recorded span (for the note)
};

// Adds each region's span (times `host_scale`) to the T1 of the first op of
// `recs` after it on its thread (`sim` in the order of `recs`, ids ascending).
DataLoadingCharge chargeDataLoading(const core::Graph& graph,
                                    const std::vector<core::NodeId>& data_loaders,
                                    const std::vector<OpRecord>& recs, const OverheadTable& table,
                                    OverheadStatistic stat, double host_scale,
                                    std::vector<SimOp>* sim);

// The prediction's note on what was charged, or was not; empty without regions.
std::string dataLoadingNote(const DataLoadingCharge& charge);

}  // namespace tracetwin::predictors
