#include "replay/trace_meta.h"

#include <fmt/core.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/json_document.h"
#include "core/text_file.h"

namespace tracetwin::replay {
namespace {

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

template <typename T>
T readKey(const nlohmann::json& doc, const char* key, const std::string& path, T fallback) {
  auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: key '{}' has the wrong type ({})", path, key, e.what()));
  }
}

RecordedHost readHost(const nlohmann::json& host, const std::string& path) {
  const std::string where = path + " (host)";
  RecordedHost h;
  h.cpu_model = readKey<std::string>(host, "cpu_model", where, "");
  h.cpu_family = readKey<int>(host, "cpu_family", where, -1);
  h.cpu_model_number = readKey<int>(host, "cpu_model_number", where, -1);
  h.logical_cpus = readKey<int64_t>(host, "logical_cpus", where, 0);
  h.clock_mhz = readKey<double>(host, "clock_mhz", where, 0.0);
  auto caches = host.find("caches");
  if (caches != host.end() && !caches->is_null()) {
    if (!caches->is_array()) throw InputError(fmt::format("{}: 'caches' must be a list", where));
    for (size_t i = 0; i < caches->size(); ++i) {
      const nlohmann::json& c = (*caches)[i];
      const std::string entry = fmt::format("{} caches[{}]", where, i);
      if (!c.is_object()) throw InputError(fmt::format("{}: expected an object", entry));
      const auto level = readKey<std::string>(c, "level", entry, "");
      const auto bytes = readKey<int64_t>(c, "bytes", entry, 0);
      if (level.empty() || bytes <= 0) {
        throw InputError(fmt::format("{}: expected a 'level' and 'bytes' > 0", entry));
      }
      h.caches.emplace_back(level, bytes);
    }
  }
  return h;
}

}  // namespace

std::string metaPathForTrace(const std::string& trace_path) {
  // Longest suffix first: "X.et.json.gz" must lose all three parts.
  for (const char* suffix : {".et.json.gz", ".et.json", ".json.gz", ".json", ".gz"}) {
    if (endsWith(trace_path, suffix)) {
      return trace_path.substr(0, trace_path.size() - std::string(suffix).size()) + ".meta.json";
    }
  }
  return trace_path + ".meta.json";
}

std::optional<TraceMeta> readTraceMeta(const std::string& trace_path) {
  const std::string path = metaPathForTrace(trace_path);
  const std::optional<std::string> text = core::readTextFileIfPresent(path, "a trace's meta file");
  if (!text) return std::nullopt;
  const nlohmann::json doc = core::parseJsonDocument(*text, path);
  if (!doc.is_object()) throw InputError(fmt::format("{}: expected a JSON object", path));
  TraceMeta meta;
  meta.path = path;
  meta.iteration_ms = readKey<double>(doc, "iteration_ms", path, 0.0);
  meta.job_step_ms = readKey<double>(doc, "job_step_ms", path, 0.0);
  meta.iteration_cpu_ms = readKey<double>(doc, "iteration_cpu_ms", path, 0.0);
  meta.samples = readKey<int>(doc, "samples", path, 0);
  meta.threads = readKey<int>(doc, "threads", path, 0);
  meta.torch_version = readKey<std::string>(doc, "torch_version", path, "");
  meta.device = readKey<std::string>(doc, "device", path, "");
  if (auto host = doc.find("host"); host != doc.end() && !host->is_null()) {
    if (!host->is_object()) throw InputError(fmt::format("{}: 'host' must be an object", path));
    meta.host = readHost(*host, path);
  }
  if (meta.iteration_ms < 0 || meta.threads < 0) {
    throw InputError(fmt::format("{}: iteration_ms and threads must be >= 0 (got {}, {})", path,
                                 meta.iteration_ms, meta.threads));
  }
  return meta;
}

}  // namespace tracetwin::replay
