#include "predictors/kernels/fused_kernels.h"

#include "core/compiled_regions.h"
#include "predictors/kernels/xgb_model.h"

namespace tracetwin::predictors {

std::string borrowedFamilyOf(const std::string& kernel_name) {
  const std::string kind = core::compiledKernelKind(kernel_name);
  if (kind == "pointwise" || kind == "foreach" || kind == "reduction" ||
      kind == "persistent_reduction" || kind == "scan") {
    return "elementwise";
  }
  return "";
}

const KernelModel* borrowedModel(const ModelSet& models, const std::string& kernel_name,
                                 std::string* label) {
  const std::string family = borrowedFamilyOf(kernel_name);
  if (family.empty()) return nullptr;
  const KernelModel* model = models.model(family);
  if (model == nullptr) return nullptr;
  const KernelModel* base = analyticBase(model);
  *label = "borrowed:" + family + ":" + base->kind();
  return base;
}

}  // namespace tracetwin::predictors
