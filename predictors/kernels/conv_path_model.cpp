#include "predictors/kernels/conv_path_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "core/errors.h"
#include "predictors/models/json_fields.h"
#include "core/units.h"

namespace tracetwin::predictors {
namespace {

using core::kUsPerSecond;

// A path's own fit needs a few samples per coefficient; below this it takes
// the pooled terms (a trace can hold a path the calibration grid missed).
constexpr int64_t kMinPathSamples = 12;

// The conv feature columns this model reads (features.cpp, convFeatures).
constexpr size_t kLog2BatchColumn = 0;
constexpr size_t kLog2GroupsColumn = 8;
constexpr size_t kBackwardColumn = 10;
constexpr size_t kNativePathColumn = 12;

bool column(const OpFeatures& f, size_t i) { return f.x.size() > i && f.x[i] > 0.5f; }

// Fits t = t0 + a*compute + b*activations + c*weights on `rows` ((1, compute,
// activations, weights) each). A negative coefficient means the data cannot
// tell that term from the others (a weight-bound path with few weight
// sizes): its column is dropped and the rest refitted, so no term predicts
// a larger op as faster.
ConvPathModel::Terms fitTerms(const std::vector<std::array<double, 4>>& rows,
                              const std::vector<double>& y) {
  std::array<bool, 4> used = {true, true, true, true};
  std::vector<double> x;
  for (int pass = 0; pass < 4; ++pass) {
    std::vector<std::vector<double>> a;
    a.reserve(rows.size());
    for (const auto& r : rows) {
      std::vector<double> row(4);
      for (size_t j = 0; j < 4; ++j) row[j] = used[j] ? r[j] : 0.0;
      a.push_back(std::move(row));
    }
    x = relativeLeastSquares(a, y);
    bool dropped = false;
    for (size_t j = 0; j < 4; ++j) {
      if (used[j] && x[j] < 0) {
        used[j] = false;
        dropped = true;
      }
    }
    if (!dropped) break;
  }
  ConvPathModel::Terms t;
  t.t0_us = used[0] ? std::max(x[0], 0.0) : 0.0;
  t.compute = used[1] ? std::max(x[1], 0.0) : 0.0;
  t.activations = used[2] ? std::max(x[2], 0.0) : 0.0;
  t.weights = used[3] ? std::max(x[3], 0.0) : 0.0;
  t.samples = static_cast<int64_t>(rows.size());
  return t;
}

nlohmann::json termsJson(const ConvPathModel::Terms& t) {
  return {{"t0_us", t.t0_us},
          {"compute", t.compute},
          {"activations", t.activations},
          {"weights", t.weights},
          {"samples", t.samples}};
}

ConvPathModel::Terms termsFromJson(const nlohmann::json& j, const std::string& where) {
  ConvPathModel::Terms t;
  t.t0_us = requiredNumber(j, "t0_us", where);
  t.compute = requiredNumber(j, "compute", where);
  t.activations = requiredNumber(j, "activations", where);
  t.weights = requiredNumber(j, "weights", where);
  t.samples = requiredCount(j, "samples", where);
  if (t.t0_us < 0 || t.compute < 0 || t.activations < 0 || t.weights < 0)
    throw InputError(fmt::format("{}: coefficients must be >= 0", where));
  return t;
}

}  // namespace

std::string ConvPathModel::pathKey(const OpFeatures& f) {
  std::string key = column(f, kBackwardColumn) ? "bwd" : "fwd";
  key += column(f, kNativePathColumn) ? "/native" : "/onednn";
  key += column(f, kLog2GroupsColumn) ? "/grouped" : "/dense";
  return key;
}

bool ConvPathModel::nativePath(const OpFeatures& f) { return column(f, kNativePathColumn); }

ConvPathModel::Inputs ConvPathModel::inputsOf(const OpFeatures& f, const DeviceSpec& d) {
  const double passes = column(f, kBackwardColumn) ? 2.0 : 1.0;
  // The native path runs one matrix product per image, each reading the
  // whole weight; oneDNN reads it once per call.
  const double images =
      column(f, kNativePathColumn) ? std::exp2(static_cast<double>(f.x[kLog2BatchColumn])) : 1.0;
  Inputs in;
  in.compute_us = f.flops / d.peakFlops(f.dtype) * kUsPerSecond;
  // OpFeatures::bytes counts the weight once per pass; the rest is the
  // activations'.
  in.activation_us =
      std::max(f.bytes - f.weight_bytes * passes, 0.0) / d.memory_bandwidth * kUsPerSecond;
  in.weight_us = f.weight_bytes * passes * images / d.memory_bandwidth * kUsPerSecond;
  return in;
}

const ConvPathModel::Terms& ConvPathModel::termsFor(const OpFeatures& f) const {
  auto it = paths.find(pathKey(f));
  return it == paths.end() ? pooled : it->second;
}

double ConvPathModel::predictUs(const OpFeatures& f, const DeviceSpec& d) const {
  const Terms& t = termsFor(f);
  const Inputs in = inputsOf(f, d);
  return t.t0_us + t.compute * in.compute_us + t.activations * in.activation_us +
         t.weights * in.weight_us;
}

nlohmann::json ConvPathModel::save(const std::string&, const std::string&) const {
  nlohmann::json by_path = nlohmann::json::object();
  for (const auto& [key, t] : paths) by_path[key] = termsJson(t);
  return {{"pooled", termsJson(pooled)}, {"paths", by_path}};
}

std::shared_ptr<const KernelModel> ConvPathModel::fromJson(const nlohmann::json& j,
                                                           const std::string&) {
  auto m = std::make_shared<ConvPathModel>();
  if (!j.is_object() || !j.contains("pooled") || !j.contains("paths") || !j.at("paths").is_object())
    throw InputError("conv_path model: expected an object with \"pooled\" and \"paths\"");
  m->pooled = termsFromJson(j.at("pooled"), "conv_path model, pooled");
  for (const auto& [key, t] : j.at("paths").items())
    m->paths[key] = termsFromJson(t, fmt::format("conv_path model, path {}", key));
  return m;
}

std::shared_ptr<ConvPathModel> fitConvPaths(const std::vector<const Sample*>& s,
                                            const DeviceSpec& d) {
  auto m = std::make_shared<ConvPathModel>();
  if (s.empty()) return m;
  std::map<std::string, std::pair<std::vector<std::array<double, 4>>, std::vector<double>>> by;
  std::vector<std::array<double, 4>> all_rows;
  std::vector<double> all_y;
  for (const Sample* p : s) {
    const ConvPathModel::Inputs in = ConvPathModel::inputsOf(p->f, d);
    const std::array<double, 4> row = {1.0, in.compute_us, in.activation_us, in.weight_us};
    auto& [rows, y] = by[ConvPathModel::pathKey(p->f)];
    rows.push_back(row);
    y.push_back(p->us);
    all_rows.push_back(row);
    all_y.push_back(p->us);
  }
  m->pooled = fitTerms(all_rows, all_y);
  for (const auto& [key, data] : by) {
    if (static_cast<int64_t>(data.first.size()) >= kMinPathSamples)
      m->paths[key] = fitTerms(data.first, data.second);
  }
  return m;
}

}  // namespace tracetwin::predictors
