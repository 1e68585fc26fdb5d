#include "predictors/kernels/sparse_add_model.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/errors.h"
#include "core/text_file.h"

namespace tracetwin::predictors {
namespace {

constexpr int64_t kItemBytes = 4;  // float32 tables, as calibrated

double missFraction(double bytes, double cache) {
  return bytes > 0 && cache > 0 ? std::max(0.0, 1.0 - cache / bytes) : 0.0;
}

}  // namespace

const std::vector<std::string>& SparseAddModel::terms() {
  static const std::vector<std::string> t = {
      "1",      "nnz*log2(nnz)",      "nnz*dim",    "nnz*dim*miss(values)",
      "unique", "unique*miss(table)", "unique*dim", "unique*dim*miss(table)"};
  return t;
}

std::vector<double> sparseAddTermValues(const SparseAddShape& s, double values_cache_bytes,
                                        double table_cache_bytes) {
  const double n = s.nnz, d = s.dim, u = std::min(s.unique, s.nnz);
  const double mv = missFraction(n * d * kItemBytes, values_cache_bytes);
  const double mt = missFraction(s.rows * d * kItemBytes, table_cache_bytes);
  return {1.0, n * std::log2(std::max(n, 2.0)), n * d, n * d * mv, u, u * mt, u * d, u * d * mt};
}

double SparseAddTerms::predictUs(const SparseAddShape& s) const {
  const std::vector<double> x = sparseAddTermValues(s, values_cache_bytes, table_cache_bytes);
  double us = 0;
  for (size_t k = 0; k < coefficients_us.size() && k < x.size(); ++k) {
    us += coefficients_us[k] * x[k];
  }
  return us;
}

double SparseAddModel::predictUs(const SparseAddShape& s, double cold_fraction) const {
  if (empty()) return 0;
  const double w = warm.predictUs(s);
  if (cold.coefficients_us.empty()) return w;
  return w + std::clamp(cold_fraction, 0.0, 1.0) * (cold.predictUs(s) - w);
}

namespace {

SparseAddTerms readTerms(const nlohmann::json& j, const std::string& prefix,
                         const std::string& source) {
  SparseAddTerms t;
  t.coefficients_us = j.at(prefix + "coefficients_us").get<std::vector<double>>();
  if (t.coefficients_us.size() != SparseAddModel::terms().size()) {
    throw InputError(fmt::format("{}: {} {}coefficients for {} terms", source,
                                 t.coefficients_us.size(), prefix, SparseAddModel::terms().size()));
  }
  // Fitted by non-negative least squares: a negative or non-finite term is a
  // corrupt file (a -1000 predicted a sparse add at -0.7 ms).
  for (size_t k = 0; k < t.coefficients_us.size(); ++k) {
    if (!(t.coefficients_us[k] >= 0) || !std::isfinite(t.coefficients_us[k])) {
      throw InputError(
          fmt::format("{}: {}coefficients_us[{}] (term \"{}\"): expected a finite value >= 0",
                      source, prefix, k, SparseAddModel::terms()[k]));
    }
  }
  t.values_cache_bytes = j.at(prefix + "values_cache_bytes").get<double>();
  t.table_cache_bytes = j.at(prefix + "table_cache_bytes").get<double>();
  for (const auto& [name, bytes] : {std::pair{"values_cache_bytes", t.values_cache_bytes},
                                    std::pair{"table_cache_bytes", t.table_cache_bytes}}) {
    if (!(bytes > 0) || !std::isfinite(bytes)) {
      throw InputError(
          fmt::format("{}: {}{} {}: expected a positive cache size", source, prefix, name, bytes));
    }
  }
  return t;
}

void writeTerms(const SparseAddTerms& t, const std::string& prefix, nlohmann::json* j) {
  (*j)[prefix + "coefficients_us"] = t.coefficients_us;
  (*j)[prefix + "values_cache_bytes"] = t.values_cache_bytes;
  (*j)[prefix + "table_cache_bytes"] = t.table_cache_bytes;
}

}  // namespace

SparseAddModel SparseAddModel::fromJson(const nlohmann::json& j, const std::string& source) {
  SparseAddModel m;
  try {
    if (j.value("kind", "") != "sparse_add_coalesce") {
      throw InputError(fmt::format("{}: not a sparse add model (kind must be "
                                   "'sparse_add_coalesce')",
                                   source));
    }
    const auto names = j.at("terms").get<std::vector<std::string>>();
    if (names != terms()) {
      throw InputError(fmt::format("{}: terms {} are not this build's; re-run "
                                   "tracetwin calibrate --families sparse_add",
                                   source, j.at("terms").dump()));
    }
    m.warm = readTerms(j, "", source);
    if (j.contains("cold_coefficients_us")) m.cold = readTerms(j, "cold_", source);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: bad sparse add model: {}", source, e.what()));
  }
  for (const char* key : {"points", "rounds", "threads", "torch", "load", "flush_mib",
                          "median_abs_error_pct", "p90_abs_error_pct",
                          "cold_median_abs_error_pct", "cold_p90_abs_error_pct"}) {
    if (j.contains(key)) m.provenance[key] = j[key];
  }
  return m;
}

SparseAddModel SparseAddModel::loadFrom(const std::string& dir) {
  const std::filesystem::path path = std::filesystem::path(dir) / kFileName;
  const std::optional<std::string> text =
      core::readTextFileIfPresent(path.string(), "a sparse-add model", core::InputUse::kModel);
  if (!text) return {};
  const nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded()) throw InputError(fmt::format("{}: not JSON", path.string()));
  return fromJson(j, path.string());
}

void SparseAddModel::saveTo(const std::string& dir) const {
  if (empty()) return;
  nlohmann::json j = provenance.is_object() ? provenance : nlohmann::json::object();
  j["kind"] = "sparse_add_coalesce";
  j["terms"] = terms();
  writeTerms(warm, "", &j);
  if (!cold.coefficients_us.empty()) writeTerms(cold, "cold_", &j);
  const std::filesystem::path path = std::filesystem::path(dir) / kFileName;
  core::updateModelFile(path.string(), j.dump(1) + "\n");
}

double expectedUniqueRows(double nnz, double rows) {
  if (rows <= 0 || nnz <= 0) return 0;
  return rows * -std::expm1(-nnz / rows);
}

}  // namespace tracetwin::predictors
