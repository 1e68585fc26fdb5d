// A Prediction as the JSON of `predict --json-out` (and the per-op step
// terms `compare` reports beside its measurements).
#include <nlohmann/json.hpp>

#include "predictors/simulation/predictor.h"

namespace tracetwin::predictors {

void addStepTerms(const OpPrediction& o, nlohmann::json* op) {
  nlohmann::json& j = *op;
  if (o.code_cold_us > 0) j["code_cold_us"] = o.code_cold_us;
  if (o.cold_output_us > 0) j["cold_output_us"] = o.cold_output_us;
  if (o.cold_input_bytes > 0) j["cold_input_bytes"] = o.cold_input_bytes;
  if (o.cold_input_us > 0) j["cold_input_us"] = o.cold_input_us;
  if (o.cold_tensor_us > 0) j["cold_tensor_us"] = o.cold_tensor_us;
  if (o.page_fault_us > 0) j["page_fault_us"] = o.page_fault_us;
  if (o.input_reuse_bytes >= 0) j["input_reuse_bytes"] = o.input_reuse_bytes;
}

nlohmann::json predictionToJson(const Prediction& p) {
  auto opJson = [](const OpPrediction& o) {
    nlohmann::json j{{"id", o.id},         {"name", o.name},
                     {"family", o.family}, {"predicted_us", o.predicted_us},
                     {"cpu_us", o.cpu_us}, {"model", o.model}};
    if (o.kernels >= 0) j["kernels"] = o.kernels;
    addStepTerms(o, &j);
    return j;
  };
  nlohmann::json j;
  j["iteration_ms"] = p.iteration_ms;
  j["device"] = p.device;
  j["breakdown"] = {{"device_active_ms", p.breakdown.device_active_ms},
                    {"device_idle_ms", p.breakdown.device_idle_ms},
                    {"cpu_bound_ms", p.breakdown.cpu_bound_ms},
                    {"exposed_comm_ms", p.breakdown.exposed_comm_ms}};
  j["per_op"] = nlohmann::json::array();
  for (const OpPrediction& o : p.per_op) j["per_op"].push_back(opJson(o));
  j["unmodelled_ops"] = nlohmann::json::array();
  for (const OpPrediction& o : p.unmodelled_ops) j["unmodelled_ops"].push_back(opJson(o));
  j["uncalibrated_ops"] = uncalibratedOpsJson(p);
  j["notes"] = p.notes;
  return j;
}

nlohmann::json uncalibratedOpsJson(const Prediction& p) {
  nlohmann::json out = nlohmann::json::array();
  for (const UncalibratedOp& u : p.uncalibrated_ops) {
    out.push_back({{"name", u.name}, {"family", u.family}, {"count", u.count}});
  }
  return out;
}

}  // namespace tracetwin::predictors
