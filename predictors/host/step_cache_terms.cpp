#include "predictors/host/step_cache_terms.h"

#include <set>
#include <stdexcept>
#include <string>

#include "predictors/kernels/analytic_models.h"
#include "predictors/host/cache_reuse.h"
#include "predictors/host/code_cold.h"
#include "predictors/kernels/conv_path_model.h"
#include "predictors/host/fresh_pages.h"
#include "predictors/host/reuse_distance.h"
#include "predictors/kernels/xgb_model.h"

namespace tracetwin::predictors {
namespace {

// Whether the family's time is the op's on cache-hot inputs with no DRAM
// floor for the cold ones: a roofline or the convolution paths (the
// bandwidth-curve and cache models have a floor).
bool hotOnlyModel(const KernelModel* model) {
  const KernelModel* base = analyticBase(model);
  return dynamic_cast<const RooflineModel*>(base) != nullptr ||
         dynamic_cast<const ConvPathModel*>(base) != nullptr;
}

// The cache cold inputs are judged against, as the calibration measured it:
// the traffic a tensor survives (reuse_probe.h), else where the elementwise
// bandwidth curve falls off its plateau, else the device's last-level cache
// (the models' times are that device's; cross-device scaling follows).
//
// The knee is a streaming benchmark's, and no reuse capacity: on the
// family-25 EPYC the curve falls off at 8 MiB, while a tensor survived
// 44 MiB of other traffic (its L3 reads 32 MiB). Judged against the knee,
// embbag's 1.28 MB gradients were cold after 11-20 MB of traffic and their
// zero_ predicted at 51 us against 19-27 replayed (embbag +26.9% in a live
// run); against the probe's 44 MiB, embbag +5.2%, 22 of 23 traces within
// 10% (data/models/host/README.md).
double coldCacheBytes(const ModelSet& models) {
  if (models.device.reuse_cache_bytes) return *models.device.reuse_cache_bytes;
  double cache = static_cast<double>(models.device.lastLevelCacheBytes());
  // The curve may sit under an XGBoost residual: its knee is the base's. Read
  // as the residual alone, the knee fell back to the VM's 32 MiB L3 and
  // embbag's 1.28 MB gradients, 27 MB of traffic after their last touch,
  // counted as cache-hot (zero_: 14 us predicted, 31-38 measured).
  if (const auto* curve =
          dynamic_cast<const BandwidthCurveModel*>(analyticBase(models.model("elementwise")))) {
    if (const double knee = curve->cacheKneeBytes(); knee > 0) cache = knee;
  }
  return cache;
}

}  // namespace

namespace {
// The families whose trees read the inputs' reuse distances; the others keep
// them unknown, so that their ops still predict once per shape.
std::set<std::string> familiesReadingReuse(const ModelSet& models) {
  std::set<std::string> reading;
  for (const std::string& family : models.families()) {
    const auto* learned = dynamic_cast<const XgbResidualModel*>(models.model(family));
    if (learned != nullptr && learned->readsReuse()) reading.insert(family);
  }
  return reading;
}
}  // namespace

bool needsStepTouches(const ModelSet& models) {
  return coldCacheBytes(models) > 0 || !familiesReadingReuse(models).empty();
}

// Cold input and output bytes of every op against coldCacheBytes, and the
// inputs' reuse distances for the families that read them.
void markColdInputs(std::vector<OpRecord>& recs, const ModelSet& models, const StepTouches& step,
                    double llc_share, double* llc_traffic) {
  if (!(llc_share > 0 && llc_share <= 1)) {
    throw std::logic_error("markColdInputs: a last-level cache share outside (0, 1]");
  }
  const std::set<std::string> reading = familiesReadingReuse(models);
  const double cache_bytes = coldCacheBytes(models) * llc_share;
  if ((cache_bytes > 0 || !reading.empty()) && step.ops() != recs.size()) {
    throw std::logic_error("markColdInputs: the step's touches are not those of its ops");
  }
  std::vector<ColdBytes> cold(recs.size());
  if (cache_bytes > 0) cold = coldBytes(step, cache_bytes);
  if (llc_traffic != nullptr) *llc_traffic = 0;
  if (!reading.empty() || (llc_traffic != nullptr && cache_bytes > 0)) {
    const std::vector<double> reuse =
        inputReuseBytes(step, static_cast<double>(models.device.privateCacheBytes()), llc_traffic);
    for (size_t i = 0; i < recs.size(); ++i) {
      if (reading.count(recs[i].f.family)) {
        recs[i].f.reuse_bytes = reuse[i] / llc_share;
        recs[i].out.input_reuse_bytes = recs[i].f.reuse_bytes;
      }
    }
  }
  for (size_t i = 0; i < recs.size(); ++i) {
    recs[i].f.cold_bytes = cold[i].inputs;
    recs[i].out.cold_input_bytes = cold[i].inputs;
    recs[i].cold_output_bytes = cold[i].outputs;
    recs[i].cold_input_tensors = cold[i].input_tensors;
  }
}

// CPU models: the DRAM reads a step adds to a kernel model's cache-hot time,
// at the device's DRAM bandwidth, on top of the prediction (not floors: the
// op's own traffic comes as well). Not across devices, not for fallbacks.
// - Cold outputs: an op whose outputs land on memory that went cold first
//   reads those lines (write-allocate). Offline on the 11 traces of
//   2026-11-24 it moved every trace it touched toward the replays: embbag's
//   1.28 MB embedding gradients (+34 us each), ResNet-18's weight gradients
//   (conv, +1.1 ms a step); docs/prediction.md. A GPU's L2 takes
//   whole-sector writes without reading them.
// - Cold inputs of roofline families (GEMM, convolution), which unlike the
//   bandwidth-curve and cache models have no DRAM floor. ResNet-18's last
//   convolutions read a 9.4 MB weight that the rest of the step evicted:
//   replayed alone in a step, 950 us against 810-900 us for the same shapes
//   in calibration, whose repeated calls find the weight in the LLC.
void addColdDramReads(std::vector<OpRecord>& recs, const ModelSet& models,
                      const PredictOptions& opts) {
  if (opts.target || models.device.kind != DeviceKind::kCpu) return;
  const double bandwidth = models.device.memory_bandwidth;
  if (bandwidth <= 0) return;
  // A cold output line costs what the device's probe measured, where it did;
  // else a read at the copy bandwidth, which overstates it on the EPYCs here
  // (cold_write_probe.h).
  const double cold_write_us_per_byte = models.device.cold_write_us_per_mib
                                            ? *models.device.cold_write_us_per_mib / (1 << 20)
                                            : 1e6 / bandwidth;
  // The family's model is looked up for ops with cold inputs only, and
  // again only when the family changes.
  const core::InternedText* family = nullptr;
  bool hot_only = false;
  for (OpRecord& r : recs) {
    if (r.fallback) continue;
    r.out.cold_output_us = r.cold_output_bytes * cold_write_us_per_byte;
    if (r.f.cold_bytes > 0 && (family == nullptr || *family != r.f.family)) {
      family = &r.f.family;
      const KernelModel* model = models.model(r.f.family);
      hot_only = model != nullptr && hotOnlyModel(model);
    }
    r.out.cold_input_us = r.f.cold_bytes > 0 && hot_only ? r.f.cold_bytes / bandwidth * 1e6 : 0.0;
    r.out.predicted_us += r.out.cold_output_us;
    r.out.predicted_us += r.out.cold_input_us;
  }
}

void addFreshPageFaults(std::vector<OpRecord>& recs, const ModelSet& models,
                        const PredictOptions& opts, const core::SparseTensors* sparse) {
  const double per_page = models.device.page_fault_us;
  if (per_page <= 0 || opts.target || models.device.kind != DeviceKind::kCpu) return;
  const double unmap = models.device.page_unmap_us;
  for (OpRecord& r : recs) {
    if (r.fallback) continue;
    FreshBytes fresh = freshMappedBytes(*r.node);
    if (sparse != nullptr) fresh.outputs += freshSparseBytes(*r.node, *sparse);
    if (fresh.outputs <= 0 && fresh.temporaries <= 0) continue;
    // The op faults in its outputs and its own buffers, and unmaps the
    // buffers; the outputs are unmapped when freed, between later ops.
    r.out.page_fault_us = (fresh.outputs + fresh.temporaries) / double(kPageBytes) * per_page +
                          fresh.temporaries / double(kPageBytes) * unmap;
    r.out.predicted_us += r.out.page_fault_us;
    r.fresh_output_bytes = fresh.outputs;
  }
}

// CPU models with a cold-tensor term: a small op pays, per input tensor that
// went cold, the latency of its metadata and first lines (cold_tensors.h).
// Small by the kernel model's time, as calibration measured it on the grid
// points it interleaves. Not across devices: the figure is this host's.
void addColdTensorPenalties(std::vector<OpRecord>& recs, const ModelSet& models,
                            const PredictOptions& opts) {
  if (models.cold_tensors.empty() || opts.target || models.device.kind != DeviceKind::kCpu) return;
  for (OpRecord& r : recs) {
    if (r.fallback || r.cold_input_tensors <= 0 || r.out.predicted_us > CodeColdModel::kMaxOpUs)
      continue;
    const double extra = models.cold_tensors.perTensorUs(r.f.family) * r.cold_input_tensors;
    r.out.predicted_us += extra;
    r.out.cold_tensor_us = extra;
  }
}

// CPU models with a code-cold term: an op pays more the longer it has been
// since its previous call (code_cold.h): a small op since the previous op of
// its name, plus the shared part after a long op; a large one since the
// previous op of its name on the same shapes. The idle time comes from the
// predicted times themselves. Not across devices: the penalty is this
// host's.
void addCodeColdPenalties(std::vector<OpRecord>& recs, const ModelSet& models,
                          const PredictOptions& opts) {
  if (models.code_cold.empty() || opts.target || models.device.kind != DeviceKind::kCpu) return;
  std::vector<const std::string*> names;
  std::vector<uint64_t> shapes;
  std::vector<double> us;
  names.reserve(recs.size());
  shapes.reserve(recs.size());
  us.reserve(recs.size());
  for (const OpRecord& r : recs) {
    names.push_back(&r.f.op.str());
    shapes.push_back(r.shape_hash);
    us.push_back(r.out.predicted_us);
  }
  const std::vector<double> idle = idleSinceLastCall(names, us);
  const std::vector<double> idle_same_shape = idleSinceLastCall(shapes, us);
  for (size_t i = 0; i < recs.size(); ++i) {
    OpRecord& r = recs[i];
    if (r.fallback) continue;
    const double previous = i > 0 ? us[i - 1] : us.back();
    double extra = 0;
    if (us[i] <= CodeColdModel::kMaxOpUs) {
      extra = models.code_cold.penaltyUs(r.f.op, r.f.family, idle[i], previous);
    } else if (!(r.f.family == "conv" && ConvPathModel::nativePath(r.f))) {
      extra = models.code_cold.ownPenaltyUs(r.f.op, r.f.family, idle_same_shape[i]);
    }
    if (extra <= 0) continue;
    // A field, not a suffix on `model`: building 100k strings cost 120 ms of
    // the 100k-op benchmark's 290.
    r.out.predicted_us += extra;
    r.out.code_cold_us = extra;
  }
}

}  // namespace tracetwin::predictors
