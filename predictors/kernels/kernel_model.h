// A kernel-time model of one op family, and the name-keyed registry of op
// families: which ops each serves, its analytic fallback and its trainer.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "predictors/specs/device_spec.h"
#include "predictors/kernels/features.h"

namespace tracetwin::predictors {

class KernelModel {
 public:
  virtual ~KernelModel() = default;
  // "xgboost", "roofline", "bandwidth_curve", "cache_model", "alpha_beta", "constant".
  virtual std::string kind() const = 0;
  // Predicted device time in microseconds on `device` (the device the model
  // was calibrated on; cross-device scaling happens outside).
  virtual double predictUs(const OpFeatures& f, const DeviceSpec& device) const = 0;
  // The time with every input in cache (OpFeatures::cold_bytes ignored), and
  // the least time the op's cold inputs take from DRAM; predictUs is the
  // larger. A learned residual, fitted on microbenchmarks whose inputs are
  // cache-hot, corrects the first only (xgb_model.h).
  virtual double hotUs(const OpFeatures& f, const DeviceSpec& device) const {
    return predictUs(f, device);
  }
  virtual double coldFloorUs(const OpFeatures&, const DeviceSpec&) const { return 0.0; }
  // The least time the op's arithmetic takes at the device's listed peak for
  // its dtype: a bound a learned residual must not cross (0: none).
  virtual double computeFloorUs(const OpFeatures&, const DeviceSpec&) const { return 0.0; }
  // Many ops at once (learned models amortise their per-call cost here).
  virtual void predictBatch(const std::vector<const OpFeatures*>& ops, const DeviceSpec& device,
                            std::vector<double>* out_us) const {
    out_us->resize(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) (*out_us)[i] = predictUs(*ops[i], device);
  }
  // Parameters as JSON; big payloads (XGBoost boosters) go to files in
  // `dir`, named from `stem`, listed in the returned object's "files".
  virtual nlohmann::json save(const std::string& dir, const std::string& stem) const = 0;
};

using ModelLoader = std::function<std::shared_ptr<const KernelModel>(const nlohmann::json& params,
                                                                     const std::string& dir)>;

// Registers/looks up model kinds for ModelSet::load. Unknown kind -> InputError
// listing the known ones.
void registerModelKind(const std::string& kind, ModelLoader loader);
std::shared_ptr<const KernelModel> loadModel(const std::string& kind, const nlohmann::json& params,
                                             const std::string& dir);

struct MeasuredOp;
struct FitOptions;

// One entry per op family (DESIGN.md "Kernel models").
struct FamilyEntry {
  std::string family;                    // "gemm"
  std::string description;               // one line, for help and reports
  std::vector<std::string> example_ops;  // which ops it serves (documentation)
  // Analytic model from the device spec alone: used when a ModelSet has no
  // model of this family (reported as a fallback), and as the base that
  // learned models correct.
  std::function<std::shared_ptr<const KernelModel>(const DeviceSpec&)> fallback;
};

const std::vector<FamilyEntry>& familyRegistry();
// Throws UsageError listing the known families when `family` is unknown.
const FamilyEntry& familyEntry(const std::string& family);

}  // namespace tracetwin::predictors
