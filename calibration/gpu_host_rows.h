// What a GPU calibration's rows give the host side of its model set: each
// op's host call beside its kernels (predictors/host/host_costs.h), and each op's
// kernel count beside its features (predictors/kernels/launch_counts.h).
// Calibration-private.
#pragma once

#include <vector>

#include "calibration/dataset.h"
#include "predictors/host/host_costs.h"
#include "predictors/kernels/launch_counts.h"

namespace tracetwin::calibration {

// Rows with a host time (GPU rows measured on this host).
std::vector<predictors::HostCostSample> hostCostSamples(const std::vector<DatasetRow>& rows);

// Rows with a kernel count, pooled ones without a host time included; cold
// and evicted rows are left out (they repeat a grid point's kernels).
std::vector<predictors::LaunchSample> launchSamples(const std::vector<DatasetRow>& rows);

}  // namespace tracetwin::calibration
