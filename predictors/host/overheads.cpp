#include "predictors/host/overheads.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "core/json_document.h"
#include "core/text_file.h"
#include "predictors/models/json_fields.h"

namespace tracetwin::predictors {
namespace {

constexpr const char* kFormat = "tracetwin-overheads/1";
constexpr const char* kKeys[] = {"t1", "t2", "t3", "t4", "t5"};

// Defaults when nothing was measured, microseconds, in the order T1..T5.
// Typical eager-mode PyTorch on a server CPU (Lin et al. 2022 report T1 and
// T4 of a few microseconds on V100 hosts; T2 is the dispatcher path).
constexpr double kDefaultUs[] = {6.0, 8.0, 3.0, 4.0, 2.0};

// A Kineto trace's timestamps lie within +-2^53 us and its durations under
// 2^53 (core/kineto/kineto_reader.cpp), so every gap or span `link` measures
// is under 2^55 us: a longer one was edited in. A median of 1e17 us was
// charged, and the prediction then blamed "the model set's files" for the
// step it gave.
constexpr double kMaxOverheadUs = 36028797018963968.0;  // 2^55

double overheadUs(const nlohmann::json& stat, const char* key, const std::string& where) {
  const double us = requiredNumber(stat, key, where);
  if (!(us >= 0 && us <= kMaxOverheadUs)) {
    throw InputError(fmt::format("{}: {} must be from 0 to 2^55 us, got {:g}", where, key, us));
  }
  return us;
}

}  // namespace

double defaultOverheadUs(Overhead which) { return kDefaultUs[static_cast<int>(which)]; }

double OverheadTable::us(Overhead which, const std::string& op, bool* used_default,
                        OverheadStatistic stat) const {
  const auto& table = t[static_cast<int>(which)];
  if (used_default) *used_default = false;
  if (auto it = table.find(op); it != table.end()) return it->second.us(stat);
  if (auto it = table.find(kAllOps); it != table.end()) return it->second.us(stat);
  if (used_default) *used_default = true;
  return defaultOverheadUs(which);
}

double OverheadTable::regionUs(const std::string& label, OverheadStatistic stat) const {
  auto it = regions.find(label);
  if (it == regions.end()) return -1;
  return it->second.us(stat);
}

bool OverheadTable::empty() const {
  for (const auto& m : t) {
    if (!m.empty()) return false;
  }
  return true;
}

nlohmann::json OverheadTable::toJson() const {
  nlohmann::json j;
  j["format"] = kFormat;
  j["sources"] = sources;
  if (charge_mean) j["statistic"] = "mean";
  for (int i = 0; i < 5; ++i) {
    nlohmann::json m = nlohmann::json::object();
    for (const auto& kv : t[i]) {
      m[kv.first] = {{"median_us", kv.second.median_us},
                     {"iqr_us", kv.second.iqr_us},
                     {"count", kv.second.count}};
      if (kv.second.mean_us >= 0) m[kv.first]["mean_us"] = kv.second.mean_us;
    }
    j[kKeys[i]] = m;
  }
  for (const auto& [name, stat] : regions) {
    j["regions"][name] = {{"median_us", stat.median_us}, {"iqr_us", stat.iqr_us},
                          {"count", stat.count}};
    if (stat.mean_us >= 0) j["regions"][name]["mean_us"] = stat.mean_us;
  }
  return j;
}

OverheadTable OverheadTable::fromJson(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw InputError(fmt::format("{}: expected a JSON object", source));
  auto fmt_it = j.find("format");
  if (fmt_it == j.end() || !fmt_it->is_string() || fmt_it->get<std::string>() != kFormat) {
    throw InputError(fmt::format("{}: expected \"format\": \"{}\"", source, kFormat));
  }
  OverheadTable table;
  if (auto s = j.find("sources"); s != j.end()) {
    if (!s->is_array()) throw InputError(fmt::format("{}: \"sources\" must be a list", source));
    for (const auto& e : *s) {
      if (!e.is_string())
        throw InputError(fmt::format("{}: \"sources\" entries must be strings", source));
      table.sources.push_back(e.get<std::string>());
    }
  }
  auto readEntries = [&](const char* name, std::map<std::string, OverheadStat>* into) {
    auto it = j.find(name);
    if (it == j.end()) return;  // a trace without kernels has no T4/T5, most none "regions"
    if (!it->is_object())
      throw InputError(fmt::format("{}: \"{}\" must be an object", source, name));
    for (const auto& [op, stat] : it->items()) {
      std::string where = fmt::format("{}: {}[\"{}\"]", source, name, op);
      if (!stat.is_object()) throw InputError(where + ": expected an object");
      OverheadStat s;
      s.median_us = overheadUs(stat, "median_us", where);
      s.iqr_us = overheadUs(stat, "iqr_us", where);
      s.count = requiredCount(stat, "count", where);
      if (stat.contains("mean_us")) s.mean_us = overheadUs(stat, "mean_us", where);
      (*into)[op] = s;
    }
  };
  for (int i = 0; i < 5; ++i) readEntries(kKeys[i], &table.t[i]);
  readEntries("regions", &table.regions);
  if (auto st = j.find("statistic"); st != j.end()) {
    if (!st->is_string() || (*st != "mean" && *st != "median"))
      throw InputError(fmt::format("{}: \"statistic\" must be \"mean\" or \"median\"", source));
    table.charge_mean = *st == "mean";
  }
  return table;
}

OverheadTable loadOverheads(const std::string& path) {
  const std::string text = core::readTextFile(path, "an overheads file", core::InputUse::kModel);
  return OverheadTable::fromJson(core::parseJsonDocument(text, path), path);
}

}  // namespace tracetwin::predictors
