// A calibrated set of kernel models for one device, saved as a directory:
// manifest.json + one file per XGBoost booster.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/value.h"
#include "predictors/host/code_cold.h"
#include "predictors/host/cold_tensors.h"
#include "predictors/host/overheads.h"
#include "predictors/kernels/kernel_model.h"
#include "predictors/kernels/launch_counts.h"
#include "predictors/kernels/sparse_add_model.h"
#include "predictors/specs/device_spec.h"

namespace tracetwin::predictors {

// The half precisions whose tensors `graph` holds: the precision sets a
// prediction of it can use. A float32 trace needs none, and reading the
// bundled bfloat16 set's trees was a third of such a `predict` (0.14 s).
std::set<core::DType> halfPrecisionsIn(const core::Graph& graph);

class ModelSet {
 public:
  static constexpr int kFormatVersion = 1;
  static constexpr const char* kManifestName = "manifest.json";
  static constexpr const char* kFormatName = "tracetwin-models";

  DeviceSpec device;          // the device the models were calibrated on
  std::string torch_version;  // LibTorch version of the replays (caller-supplied)
  std::string created;        // ISO-8601 UTC date, set by save() when empty
  // CPU overheads (T1-T5) fitted or imported; on a CPU ModelSet the per-family
  // framework cost (dispatcher + replay loop) lives in t1/t2.
  OverheadTable overheads;
  // CPU: what small ops cost on top of their kernel model when time passed
  // since their previous call (code_cold.h). Empty in older model sets.
  CodeColdModel code_cold;
  // CPU: what small ops cost on top per input tensor that went cold
  // (cold_tensors.h). Empty in older model sets.
  ColdTensorModel cold_tensors;
  // GPU: how many kernels each op launches, by shape (launch_counts.h), for
  // the host's per-launch cost. Empty in older and CPU model sets.
  LaunchCountModel launch_counts;
  // CPU: SGD's sparse add_ of an embedding gradient, coalesce included
  // (kernels/sparse_add_model.h), from DIR/sparse_add.json. Empty when absent:
  // the add is then costed as a dense add of the touched rows.
  SparseAddModel sparse_add;
  // Per family, the op names (no overload) the models were fitted on. A
  // learned residual has seen nothing of another op's kernel: the predictor
  // gives such ops the family's analytic base and says so. A family with no
  // entry (model sets from before the list) counts every op as calibrated.
  std::map<std::string, std::set<std::string>> calibrated_ops;
  // The op names `family`'s models were fitted on; nullptr when the set has
  // no list for it (every op then counts as calibrated).
  const std::set<std::string>* calibratedOpsOf(const std::string& family) const;
  bool calibrated(const std::string& family, const std::string& op) const;

  // Kernel models of the ops that ran in a half precision (OpFeatures::
  // precision), per dtype: the model set in DIR/bfloat16 (DIR/float16), as
  // `calibrate --dtypes bfloat16 --out DIR/bfloat16` writes it. A CPU runs
  // such ops through other kernels than float32's (feature_shapes.h,
  // halfPrecisionOf), which a float32 calibration never measured: its
  // boosters predicted mlp_bf16's GEMMs 30x their replayed time. Only
  // their kernel models and calibrated ops are used; the host costs are
  // this set's.
  std::map<core::DType, std::shared_ptr<const ModelSet>> precision_sets;
  // The set whose `family` model serves an op of `precision`: the precision
  // set when it has a model of the family, else this one.
  const ModelSet& setFor(const std::string& family, core::DType precision) const;

  void setModel(const std::string& family, std::shared_ptr<const KernelModel> model);
  const KernelModel* model(const std::string& family) const;  // nullptr if none
  std::shared_ptr<const KernelModel> sharedModel(const std::string& family) const;
  std::vector<std::string> families() const;

  // Writes DIR/manifest.json (format version, device name, LibTorch version,
  // date, per-family kind and files) and the model files, plus DIR/device.yaml,
  // and each precision set into DIR/<dtype>.
  void save(const std::string& dir) const;
  // Reads what save() wrote, with the precision sets present (of those in
  // `only_precisions`, when given). Missing files, format version mismatch or
  // (when `expected_device` is non-empty) a device mismatch -> InputError
  // naming the file; a precision set must name this set's device.
  static ModelSet load(const std::string& dir, const std::string& expected_device = "",
                       const std::set<core::DType>* only_precisions = nullptr);
  // The manifest's overheads, code-cold and cold-tensor models, and its comm
  // model where it has one, for a refit: none of them is in the dataset (the
  // comm model is `calibrate --families comm`'s fit of the distributed
  // replay), while its kernel models are about to be replaced and may be
  // stale or gone. A missing or bad manifest throws.
  static ModelSet loadStepCosts(const std::string& dir);

 private:
  std::map<std::string, std::shared_ptr<const KernelModel>> models_;
};

}  // namespace tracetwin::predictors
