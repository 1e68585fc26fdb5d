#include "predictors/models/model_set.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "core/errors.h"
#include "core/json_document.h"
#include "core/text_file.h"

namespace tracetwin::predictors {
namespace fs = std::filesystem;
namespace {

constexpr const char* kDeviceFile = "device.yaml";
// The half precisions a set may hold models of, each in DIR/<dtypeName>.
constexpr core::DType kPrecisionDtypes[] = {core::DType::kBFloat16, core::DType::kFloat16};

std::string todayUtc() {
  return fmt::format(
      "{:%Y-%m-%dT%H:%M:%SZ}",
      fmt::gmtime(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())));
}

nlohmann::json readJson(const fs::path& path) {
  const std::optional<std::string> text =
      core::readTextFileIfPresent(path.string(), "a model file", core::InputUse::kModel);
  if (!text)
    throw InputError(
        fmt::format("{}: missing (not a model directory written by calibrate?)", path.string()));
  return core::parseJsonDocument(*text, path.string());
}

template <typename T>
T field(const nlohmann::json& j, const char* key, const fs::path& file) {
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(fmt::format("{}: missing or mistyped key '{}'", file.string(), key));
  }
}

}  // namespace

void ModelSet::setModel(const std::string& family, std::shared_ptr<const KernelModel> model) {
  familyEntry(family);  // throws for unknown families
  models_[family] = std::move(model);
}

const ModelSet& ModelSet::setFor(const std::string& family, core::DType precision) const {
  if (precision_sets.empty()) return *this;
  auto it = precision_sets.find(precision);
  return it != precision_sets.end() && it->second->model(family) != nullptr ? *it->second : *this;
}

const KernelModel* ModelSet::model(const std::string& family) const {
  auto it = models_.find(family);
  return it == models_.end() ? nullptr : it->second.get();
}

std::shared_ptr<const KernelModel> ModelSet::sharedModel(const std::string& family) const {
  auto it = models_.find(family);
  return it == models_.end() ? nullptr : it->second;
}

const std::set<std::string>* ModelSet::calibratedOpsOf(const std::string& family) const {
  auto it = calibrated_ops.find(family);
  return it == calibrated_ops.end() ? nullptr : &it->second;
}

bool ModelSet::calibrated(const std::string& family, const std::string& op) const {
  const std::set<std::string>* ops = calibratedOpsOf(family);
  return ops == nullptr || ops->count(op) > 0;
}

std::vector<std::string> ModelSet::families() const {
  std::vector<std::string> out;
  for (const auto& kv : models_) out.push_back(kv.first);
  return out;
}

void ModelSet::save(const std::string& dir) const {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create model directory: {}", dir, ec.message()));
  nlohmann::json manifest;
  manifest["format"] = kFormatName;
  manifest["format_version"] = kFormatVersion;
  manifest["device"] = device.name;
  manifest["device_file"] = kDeviceFile;
  manifest["torch_version"] = torch_version;
  manifest["created"] = created.empty() ? todayUtc() : created;
  manifest["overheads"] = overheads.toJson();
  if (!code_cold.empty()) manifest["code_cold"] = code_cold.toJson();
  if (!cold_tensors.empty()) manifest["cold_tensors"] = cold_tensors.toJson();
  sparse_add.saveTo(dir);  // its own file: scripts/sparse-add-calibrate.py writes it
  if (!launch_counts.empty()) manifest["launch_counts"] = launch_counts.save(dir);
  if (!calibrated_ops.empty()) manifest["calibrated_ops"] = calibrated_ops;
  nlohmann::json models = nlohmann::json::object();
  for (const auto& [family, model] : models_) {
    nlohmann::json params = model->save(dir, family);
    nlohmann::json files = params.contains("files") ? params["files"] : nlohmann::json::array();
    models[family] = {{"kind", model->kind()}, {"params", params}, {"files", files}};
  }
  manifest["models"] = models;
  saveDeviceSpec(device, (fs::path(dir) / kDeviceFile).string());
  for (const auto& [dtype, set] : precision_sets)
    set->save((fs::path(dir) / core::dtypeName(dtype)).string());
  fs::path path = fs::path(dir) / kManifestName;
  core::updateModelFile(path.string(), manifest.dump(2) + "\n");
}

namespace {

// The manifest at `path`, its format and version checked.
nlohmann::json readManifest(const fs::path& path) {
  nlohmann::json manifest = readJson(path);
  if (field<std::string>(manifest, "format", path) != ModelSet::kFormatName) {
    throw InputError(fmt::format("{}: not a tracetwin model manifest (format must be '{}')",
                                 path.string(), ModelSet::kFormatName));
  }
  int version = field<int>(manifest, "format_version", path);
  if (version != ModelSet::kFormatVersion) {
    throw InputError(
        fmt::format("{}: stale model set: format version {}, this build reads {}; "
                    "re-run `tracetwin calibrate`",
                    path.string(), version, ModelSet::kFormatVersion));
  }
  return manifest;
}

void readStepCosts(const nlohmann::json& manifest, const fs::path& path, ModelSet* set) {
  if (manifest.contains("overheads"))
    set->overheads = OverheadTable::fromJson(manifest["overheads"], path.string());
  if (manifest.contains("code_cold"))
    set->code_cold = CodeColdModel::fromJson(manifest["code_cold"], path.string());
  if (manifest.contains("cold_tensors"))
    set->cold_tensors = ColdTensorModel::fromJson(manifest["cold_tensors"], path.string());
  set->sparse_add = SparseAddModel::loadFrom(path.parent_path().string());
}

// {"<family>": ["aten::op", ...], ...}
std::map<std::string, std::set<std::string>> calibratedOps(const nlohmann::json& manifest,
                                                           const fs::path& path) {
  const nlohmann::json& j = manifest["calibrated_ops"];
  if (!j.is_object())
    throw InputError(
        fmt::format("{}: 'calibrated_ops' must be an object of op-name lists", path.string()));
  std::map<std::string, std::set<std::string>> out;
  for (const auto& [family, ops] : j.items()) {
    if (!ops.is_array())
      throw InputError(fmt::format("{}: calibrated_ops.{}: expected an array of op names",
                                   path.string(), family));
    for (const auto& op : ops) {
      if (!op.is_string())
        throw InputError(fmt::format("{}: calibrated_ops.{}: expected op names (strings), got {}",
                                     path.string(), family, op.dump()));
      out[family].insert(op.get<std::string>());
    }
  }
  return out;
}

}  // namespace

ModelSet ModelSet::loadStepCosts(const std::string& dir) {
  ModelSet set;
  const fs::path path = fs::path(dir) / kManifestName;
  // Returning an empty set here let `calibrate --refit` on a copied dataset
  // write models without between-op costs (adds5k 20% under).
  if (!fs::exists(path)) {
    throw InputError(fmt::format(
        "{}: missing; a refit keeps the between-op, code-cold and cold-tensor costs of the models "
        "that were there (the dataset does not hold them): copy the manifest.json of the "
        "calibration that wrote the dataset beside it",
        path.string()));
  }
  const nlohmann::json manifest = readManifest(path);
  readStepCosts(manifest, path, &set);
  // The LibTorch that measured the dataset, which a refit elsewhere keeps.
  set.torch_version = field<std::string>(manifest, "torch_version", path);
  // A refit that dropped it predicted a sweep's 2-rank steps 5 ms (17%)
  // short: its collectives fell back to the device's link figures.
  if (manifest.contains("models") && manifest["models"].is_object() &&
      manifest["models"].contains("comm")) {
    const nlohmann::json& entry = manifest["models"]["comm"];
    if (!entry.is_object() || !entry.contains("params"))
      throw InputError(
          fmt::format("{}: models.comm: expected an object with params", path.string()));
    try {
      set.setModel("comm",
                   loadModel(field<std::string>(entry, "kind", path), entry["params"], dir));
    } catch (const UsageError& e) {
      throw InputError(fmt::format("{}: models.comm: {}", path.string(), e.what()));
    }
  }
  return set;
}

namespace {
// A model set is one directory: the files its manifest lists are names in it.
fs::path fileInDir(const std::string& dir, const nlohmann::json& name, const std::string& what,
                   const fs::path& manifest) {
  if (!name.is_string() || name.get<std::string>().empty() ||
      fs::path(name.get<std::string>()).has_parent_path()) {
    throw InputError(fmt::format("{}: {}: expected a file name in {}, got {}", manifest.string(),
                                 what, dir, name.dump()));
  }
  return fs::path(dir) / name.get<std::string>();
}
}  // namespace

std::set<core::DType> halfPrecisionsIn(const core::Graph& graph) {
  std::set<core::DType> found;
  for (const core::TensorRecord& t : graph.tensors()) {
    for (core::DType dtype : kPrecisionDtypes) {
      if (t.dtype == dtype) found.insert(dtype);
    }
  }
  return found;
}

ModelSet ModelSet::load(const std::string& dir, const std::string& expected_device,
                        const std::set<core::DType>* only_precisions) {
  fs::path path = fs::path(dir) / kManifestName;
  nlohmann::json manifest = readManifest(path);
  ModelSet set;
  std::string device_name = field<std::string>(manifest, "device", path);
  fs::path device_path =
      fileInDir(dir, field<std::string>(manifest, "device_file", path), "device_file", path);
  if (!fs::exists(device_path))
    throw InputError(fmt::format("{}: device file missing", device_path.string()));
  set.device = loadDeviceSpec(device_path.string());
  if (set.device.name != device_name) {
    throw InputError(fmt::format("{}: device '{}' does not match the manifest's '{}'",
                                 device_path.string(), set.device.name, device_name));
  }
  if (!expected_device.empty() && device_name != expected_device) {
    throw InputError(fmt::format("{}: models were calibrated on '{}', expected '{}'", path.string(),
                                 device_name, expected_device));
  }
  set.torch_version = field<std::string>(manifest, "torch_version", path);
  set.created = field<std::string>(manifest, "created", path);
  readStepCosts(manifest, path, &set);
  if (manifest.contains("calibrated_ops")) set.calibrated_ops = calibratedOps(manifest, path);
  if (manifest.contains("launch_counts"))
    set.launch_counts = LaunchCountModel::fromJson(manifest["launch_counts"], dir, path.string());
  if (!manifest.contains("models") || !manifest["models"].is_object()) {
    throw InputError(fmt::format("{}: missing object 'models'", path.string()));
  }
  for (const auto& [family, entry] : manifest["models"].items()) {
    if (!entry.is_object()) {
      throw InputError(fmt::format("{}: models.{}: expected an object", path.string(), family));
    }
    const nlohmann::json files = entry.value("files", nlohmann::json::array());
    if (!files.is_array()) {
      throw InputError(fmt::format("{}: models.{}.files: expected an array of file names",
                                   path.string(), family));
    }
    std::vector<fs::path> paths;
    for (const auto& file : files)
      paths.push_back(fileInDir(dir, file, fmt::format("models.{}.files", family), path));
    // save() writes the files its params load as the entry's list: a list
    // that says otherwise was edited by hand, and a copy of the set that
    // follows it would leave the trees behind.
    const nlohmann::json params = entry.value("params", nlohmann::json());
    if (params.is_object() && params.contains("files") && params["files"] != files) {
      throw InputError(
          fmt::format("{}: models.{}.files is {} but its params load {}: make the two lists agree",
                      path.string(), family, files.dump(), params["files"].dump()));
    }
    for (const fs::path& f : paths) {
      if (!fs::exists(f))
        throw InputError(fmt::format("{}: model file of family '{}' missing (listed in {})",
                                     f.string(), family, path.string()));
    }
    std::string kind = field<std::string>(entry, "kind", path);
    if (!entry.contains("params"))
      throw InputError(fmt::format("{}: model '{}' has no params", path.string(), family));
    try {
      set.setModel(family, loadModel(kind, entry["params"], dir));
    } catch (const UsageError& e) {
      throw InputError(fmt::format("{}: {}", path.string(), e.what()));
    } catch (const InputError& e) {
      // Parameter checks name the model kind, not the file: say which entry.
      if (std::string_view(e.what()).rfind(dir, 0) == 0) throw;
      throw InputError(fmt::format("{}: models.{}: {}", path.string(), family, e.what()));
    }
  }
  // Calibration writes a family's ops and its model together: ops without a
  // model are a damaged manifest, and their ops fell silently to the device
  // default (a bad-input hunt's gemm: 0.031 ms for 6.712, exit 0).
  for (const auto& [family, ops] : set.calibrated_ops) {
    if (!manifest["models"].contains(family)) {
      throw InputError(fmt::format("{}: calibrated_ops.{} lists {} ops but models.{} is missing",
                                   path.string(), family, ops.size(), family));
    }
  }
  for (core::DType dtype : kPrecisionDtypes) {
    if (only_precisions != nullptr && only_precisions->count(dtype) == 0) continue;
    const fs::path sub = fs::path(dir) / core::dtypeName(dtype);
    if (fs::exists(sub / kManifestName))
      set.precision_sets[dtype] = std::make_shared<const ModelSet>(load(sub.string(), device_name));
  }
  return set;
}

}  // namespace tracetwin::predictors
