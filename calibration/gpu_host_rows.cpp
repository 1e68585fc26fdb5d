#include "calibration/gpu_host_rows.h"

#include "calibration/cold_units.h"
#include "calibration/evicted_units.h"
#include "predictors/kernels/features.h"

namespace tracetwin::calibration {

std::vector<predictors::HostCostSample> hostCostSamples(const std::vector<DatasetRow>& rows) {
  std::vector<predictors::HostCostSample> samples;
  for (const DatasetRow& r : rows) {
    if (r.host_us > 0 && r.kernels >= 0)
      samples.push_back({r.sample.node.name, r.host_us, r.sample.measured_us, r.kernels});
  }
  return samples;
}

std::vector<predictors::LaunchSample> launchSamples(const std::vector<DatasetRow>& rows) {
  std::vector<predictors::LaunchSample> samples;
  for (const DatasetRow& r : rows) {
    if (r.kernels >= 0 && !isColdRow(r) && !isEvictedRow(r))
      samples.push_back({predictors::computeFeatures(r.sample.node), r.kernels});
  }
  return samples;
}

}  // namespace tracetwin::calibration
