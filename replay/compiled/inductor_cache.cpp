#include "replay/compiled/inductor_cache.h"

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/errors.h"

namespace tracetwin::replay::compiled {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kManifestName = "tracetwin_kernels.json";
constexpr const char* kManifestFormat = "tracetwin-inductor-kernels/1";

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open", path));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

json readJson(const std::string& path) {
  try {
    return json::parse(readFile(path));
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
}

int64_t intField(const json& j, const char* key, const std::string& path) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) {
    throw InputError(fmt::format("{}: key '{}': expected an integer", path, key));
  }
  return it->get<int64_t>();
}

std::string stringField(const json& j, const char* key, const std::string& path) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) {
    throw InputError(fmt::format("{}: key '{}': expected a string", path, key));
  }
  return it->get<std::string>();
}

// Keys of Triton's metadata that change how a kernel must be launched.
std::string unsupportedLaunch(const json& m) {
  auto truthy = [&](const char* key) {
    auto it = m.find(key);
    return it != m.end() && ((it->is_boolean() && it->get<bool>()) ||
                             (it->is_number_integer() && it->get<int64_t>() != 0));
  };
  for (const char* scratch : {"global_scratch_size", "profile_scratch_size"}) {
    auto it = m.find(scratch);
    if (it != m.end() && it->is_number_integer() && it->get<int64_t>() > 0) {
      return fmt::format("needs {} bytes of {} memory allocated per launch", it->get<int64_t>(),
                         scratch);
    }
  }
  if (auto it = m.find("num_ctas"); it != m.end() && it->is_number_integer() && *it != 1)
    return fmt::format("launches clusters of {} CTAs", it->get<int64_t>());
  if (auto it = m.find("cluster_dims"); it != m.end() && it->is_array()) {
    for (const json& d : *it) {
      if (d.is_number_integer() && d.get<int64_t>() > 1) return "launches thread-block clusters";
    }
  }
  if (truthy("launch_cooperative_grid")) return "is a cooperative launch";
  if (truthy("launch_pdl")) return "uses programmatic dependent launch";
  if (auto it = m.find("tensordesc_meta"); it != m.end() && !it->is_null() && !it->empty())
    return "takes TMA tensor descriptors";
  return "";
}

std::vector<KernelArg> argsFromJson(const json& j, const std::string& where) {
  if (!j.is_array())
    throw InputError(fmt::format("{}: 'args': expected [[name, type], ...]", where));
  std::vector<KernelArg> args;
  for (const json& a : j) {
    if (!a.is_array() || a.size() != 2 || !a[0].is_string() || !a[1].is_string()) {
      throw InputError(fmt::format("{}: 'args': expected [[name, type], ...]", where));
    }
    args.push_back({a[0].get<std::string>(), a[1].get<std::string>()});
  }
  return args;
}

}  // namespace

TritonBinary readTritonBinary(const std::string& metadata_path, const std::string& cubin_path) {
  const json m = readJson(metadata_path);
  if (!m.is_object()) throw InputError(fmt::format("{}: expected a JSON object", metadata_path));
  TritonBinary b;
  b.cubin_path = cubin_path;
  b.metadata_path = metadata_path;
  b.name = stringField(m, "name", metadata_path);
  b.num_warps = static_cast<int>(intField(m, "num_warps", metadata_path));
  b.shared_bytes = intField(m, "shared", metadata_path);
  // "target": {"backend": "cuda", "arch": 90, "warp_size": 32} (Triton 3),
  // or a [backend, arch, warp_size] list in some releases.
  if (auto t = m.find("target"); t != m.end()) {
    if (t->is_object() && t->contains("warp_size") && (*t)["warp_size"].is_number_integer())
      b.warp_size = (*t)["warp_size"].get<int>();
    if (t->is_array() && t->size() >= 3 && (*t)[2].is_number_integer())
      b.warp_size = (*t)[2].get<int>();
  }
  b.global_scratch_param = m.contains("global_scratch_size");
  b.profile_scratch_param = m.contains("profile_scratch_size");
  b.unsupported = unsupportedLaunch(m);
  if (b.num_warps <= 0 || b.warp_size <= 0 || b.shared_bytes < 0) {
    throw InputError(fmt::format("{}: num_warps {}, warp size {}, shared {}: expected positive",
                                 metadata_path, b.num_warps, b.warp_size, b.shared_bytes));
  }
  return b;
}

InductorCache InductorCache::open(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw InputError(fmt::format("--inductor-cache {}: not a directory", dir));
  }
  InductorCache cache;
  cache.dir_ = dir;
  for (auto it =
           fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const fs::path& p = it->path();
    const std::string ext = p.extension().string();
    if (ext == ".py") {
      cache.sources_.emplace(p.filename().string(), p.string());
    } else if (ext == ".best_config") {
      cache.best_configs_.emplace((p.parent_path() / p.stem()).string(), p.string());
    } else if (ext == ".cubin") {
      fs::path meta = p;
      meta.replace_extension(".json");
      if (!fs::exists(meta, ec)) continue;
      try {
        cache.binaries_.push_back(readTritonBinary(meta.string(), p.string()));
      } catch (const InputError&) {
        // Not Triton's metadata (or damaged): this binary cannot be matched.
      }
    }
  }
  if (ec) throw InputError(fmt::format("--inductor-cache {}: cannot read: {}", dir, ec.message()));
  const std::string manifest = (fs::path(dir) / kManifestName).string();
  if (fs::exists(manifest, ec)) cache.readManifest(manifest);
  return cache;
}

void InductorCache::readManifest(const std::string& path) {
  const json m = readJson(path);
  if (!m.is_object() || m.value("format", "") != kManifestFormat) {
    throw InputError(fmt::format("{}: expected \"format\": \"{}\"", path, kManifestFormat));
  }
  auto kernels = m.find("kernels");
  if (kernels == m.end() || !kernels->is_array()) {
    throw InputError(fmt::format("{}: 'kernels': expected an array", path));
  }
  for (size_t i = 0; i < kernels->size(); ++i) {
    const json& k = (*kernels)[i];
    const std::string where = fmt::format("{}: kernels[{}]", path, i);
    if (!k.is_object()) throw InputError(where + ": expected an object");
    ManifestEntry e;
    e.name = stringField(k, "name", where);
    e.kernel_file = stringField(k, "kernel_file", where);
    e.binary_dir = stringField(k, "binary_dir", where);
    e.args = argsFromJson(k.value("args", json()), where);
    e.num_warps = static_cast<int>(intField(k, "num_warps", where));
    e.grid_type = k.value("grid_type", "");
    const json constants = k.value("constants", json::array());
    for (const json& c : constants) {
      if (c.is_string()) e.constants.insert(c.get<std::string>());
    }
    const json config = k.value("config", json::object());  // named: items() borrows it
    for (const auto& [key, value] : config.items()) {
      if (value.is_number_integer()) e.block_sizes[key] = value.get<int64_t>();
    }
    manifest_.push_back(std::move(e));
  }
}

std::optional<CompiledKernelSpec> InductorCache::find(const std::string& name,
                                                      const std::string& kernel_file,
                                                      std::string* why) const {
  for (const ManifestEntry& e : manifest_) {
    if (e.name == name && (kernel_file.empty() || e.kernel_file == kernel_file))
      return fromManifest(e, why);
  }
  return fromSource(name, kernel_file, why);
}

std::optional<CompiledKernelSpec> InductorCache::fromManifest(const ManifestEntry& e,
                                                              std::string* why) const {
  const fs::path base = fs::path(dir_) / e.binary_dir;
  const std::string cubin = (base / (e.name + ".cubin")).string();
  const std::string meta = (base / (e.name + ".json")).string();
  std::error_code ec;
  if (!fs::exists(cubin, ec) || !fs::exists(meta, ec)) {
    *why = fmt::format("the manifest names {} but {} or its .json is missing", e.name, cubin);
    return std::nullopt;
  }
  CompiledKernelSpec s;
  try {
    s.binary = readTritonBinary(meta, cubin);
  } catch (const InputError& err) {
    *why = err.what();
    return std::nullopt;
  }
  if (!s.binary.unsupported.empty()) {
    *why = fmt::format("{} {}", e.name, s.binary.unsupported);
    return std::nullopt;
  }
  s.name = e.name;
  s.kernel_file = e.kernel_file;
  s.args = e.args;
  s.constants = e.constants;
  s.block_sizes = e.block_sizes;
  s.num_warps = e.num_warps;
  s.grid_type = e.grid_type;
  s.found_by = "manifest";
  return s;
}

std::optional<CompiledKernelSpec> InductorCache::fromSource(const std::string& name,
                                                            const std::string& kernel_file,
                                                            std::string* why) const {
  if (kernel_file.empty()) {
    *why = fmt::format("the trace names no source file for {}", name);
    return std::nullopt;
  }
  auto src = sources_.find(kernel_file);
  if (src == sources_.end()) {
    *why = fmt::format("source {} is not in the Inductor cache {}", kernel_file, dir_);
    return std::nullopt;
  }
  CompiledKernelSpec s;
  try {
    InductorKernelSource parsed = parseInductorKernelSource(readFile(src->second), src->second);
    if (parsed.kernel_name != name) {
      *why = fmt::format("{} defines {}, not {}", src->second, parsed.kernel_name, name);
      return std::nullopt;
    }
    s.args = std::move(parsed.args);
    s.constants = std::move(parsed.constants);
    s.grid_type = parsed.grid_type;
  } catch (const SourceFormatError& e) {
    *why = e.what();
    return std::nullopt;
  }
  auto cfg = best_configs_.find(
      (fs::path(src->second).parent_path() / fs::path(src->second).stem()).string());
  if (cfg == best_configs_.end()) {
    *why = fmt::format(
        "no launch config for {}: Inductor keeps a .best_config only for autotuned kernels "
        "(the manifest scripts/capture.py --compile writes names every kernel's)",
        name);
    return std::nullopt;
  }
  std::string binary_dir;  // Triton's hash directory, when the config names it
  try {
    const json c = readJson(cfg->second);
    s.num_warps = static_cast<int>(intField(c, "num_warps", cfg->second));
    for (const KernelArg& a : s.args) {
      auto it = c.find(a.name);
      if (a.type == "constexpr" && it != c.end() && it->is_number_integer())
        s.block_sizes[a.name] = it->get<int64_t>();
    }
    binary_dir = c.value("triton_cache_hash", "");
  } catch (const InputError& e) {
    *why = e.what();
    return std::nullopt;
  }
  std::vector<const TritonBinary*> matches;
  for (const TritonBinary& b : binaries_) {
    if (b.name != name || b.num_warps != s.num_warps) continue;
    if (!binary_dir.empty() && fs::path(b.cubin_path).parent_path().filename() != binary_dir)
      continue;
    matches.push_back(&b);
  }
  if (matches.size() != 1) {
    *why = matches.empty() ? fmt::format("no compiled binary of {} with {} warps in {}", name,
                                         s.num_warps, dir_)
                           : fmt::format(
                                 "{} compiled binaries of {} with {} warps in {}: which one ran is "
                                 "not recorded (the manifest of scripts/capture.py --compile is)",
                                 matches.size(), name, s.num_warps, dir_);
    return std::nullopt;
  }
  s.binary = *matches.front();
  if (!s.binary.unsupported.empty()) {
    *why = fmt::format("{} {}", name, s.binary.unsupported);
    return std::nullopt;
  }
  s.name = name;
  s.kernel_file = kernel_file;
  s.found_by = "source+best_config";
  return s;
}

}  // namespace tracetwin::replay::compiled
