// Which model times a family's ops in a prediction: the one choice that
// predictDeviceTimes makes for every family and that predictCollectiveUs
// makes for one collective (the sweep's composed screen times its
// all_to_all with it).
#pragma once

#include <memory>
#include <string>

#include "predictors/kernels/features.h"
#include "predictors/kernels/kernel_model.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/predictor.h"
#include "predictors/specs/device_spec.h"

namespace tracetwin::predictors {

// The model that times a family's ops of `set` with `opts`, and the device
// it predicts on: a system's topology for collectives, else the set's model
// (on the set's device), else the family's fallback (alpha-beta from the
// link for collectives) on the destination device (`unmodelled`).
struct FamilyModel {
  std::shared_ptr<const KernelModel> owned;  // a model made for the call
  const KernelModel* model = nullptr;
  const DeviceSpec* spec = nullptr;
  bool unmodelled = false;
};
FamilyModel familyModel(const std::string& family, const ModelSet& set, const PredictOptions& opts);

// One collective's time (us) as a prediction with `opts` times it, by
// familyModel("comm"). `f`: collective, world_size and message_bytes set.
double predictCollectiveUs(const OpFeatures& f, const ModelSet& models, const PredictOptions& opts);

}  // namespace tracetwin::predictors
