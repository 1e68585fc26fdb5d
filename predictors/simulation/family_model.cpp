#include "predictors/simulation/family_model.h"

#include "predictors/comm/comm_model.h"
#include "predictors/comm/topology.h"

namespace tracetwin::predictors {

FamilyModel familyModel(const std::string& family, const ModelSet& set,
                        const PredictOptions& opts) {
  FamilyModel out;
  out.model = set.model(family);
  out.spec = &set.device;
  // A system's topology times collectives on its own links.
  if (family == "comm" && opts.system.has_value()) {
    out.owned = std::make_shared<TopologyCommModel>(*opts.system);
    out.model = out.owned.get();
    return out;
  }
  if (out.model != nullptr) return out;
  // Unmodelled ops are predicted straight on the destination device.
  out.unmodelled = true;
  if (opts.target) out.spec = &*opts.target;
  out.owned = family == "comm" ? AlphaBetaModel::fromDevice(*out.spec, opts.comm_link)
                               : familyEntry(family).fallback(*out.spec);
  out.model = out.owned.get();
  return out;
}

double predictCollectiveUs(const OpFeatures& f, const ModelSet& models,
                           const PredictOptions& opts) {
  const FamilyModel chosen = familyModel("comm", models.setFor("comm", f.precision), opts);
  return chosen.model->predictUs(f, *chosen.spec);
}

}  // namespace tracetwin::predictors
