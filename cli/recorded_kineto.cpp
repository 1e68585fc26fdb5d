#include "cli/recorded_kineto.h"

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "replay/trace_meta.h"

namespace tracetwin::cli {

std::string recordedKinetoBeside(const std::string& trace) {
  namespace fs = std::filesystem;
  const std::string meta = replay::metaPathForTrace(trace);
  const std::string suffix = ".meta.json";
  if (meta.size() > suffix.size() &&
      meta.compare(meta.size() - suffix.size(), suffix.size(), suffix) == 0) {
    const std::string kineto = meta.substr(0, meta.size() - suffix.size()) + ".kineto.json.gz";
    if (fs::is_regular_file(kineto)) return kineto;
  }
  std::ifstream in(meta);
  if (!in) return "";
  nlohmann::json doc;
  try {
    in >> doc;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not JSON: {}", meta, e.what()));
  }
  const auto it = doc.find("profiler_trace");
  if (it == doc.end() || !it->is_object() || !it->contains("file") || !(*it)["file"].is_string())
    return "";
  const fs::path file = fs::path(meta).parent_path() / (*it)["file"].get<std::string>();
  return fs::is_regular_file(file) ? file.string() : "";
}

}  // namespace tracetwin::cli
