#include "predictors/specs/device_spec.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "core/errors.h"
#include "core/text_file.h"
#include "core/units.h"
#include "predictors/specs/link_specs.h"
#include "predictors/specs/yaml_strict.h"

namespace tracetwin::predictors {
namespace {

using core::kGiga;
using core::kMicro;

// YAML is written in the units of datasheets; these convert to SI.
constexpr double kTera = 1e12;
constexpr double kMega = 1e6;
constexpr double kMiB = 1024.0 * 1024.0;
// An unknown cache bandwidth is taken as 3x DRAM: A100/H100 L2 measure about
// 2.5-3.5x their HBM bandwidth in public microbenchmarks.
constexpr double kCacheOverDram = 3.0;

// Bounds on rates and clocks (yaml::MapReader::within): a reference-BLAS CPU
// core reads 0.003 TFLOP/s and an H200 4.8 TB/s; an Ethernet link 0.1 GB/s.
constexpr double kMinTflops = 1e-6, kMaxTflops = 1e6;
constexpr double kMinGbps = 1e-3, kMaxGbps = 1e6;
constexpr double kMinClockMhz = 1, kMaxClockMhz = 1e5;
constexpr double kMaxLatencyUs = 1e7;  // 10 s

const char* const kDtypeKeys[] = {"float32", "tf32", "float16", "bfloat16", "float64", "int8"};

std::map<std::string, double> readPeaks(const yaml::MapReader& top) {
  yaml::MapReader peaks(top.get("peak_tflops"), top.source(), "peak_tflops");
  peaks.checkKeys({"float32"}, {"tf32", "float16", "bfloat16", "float64", "int8"});
  std::map<std::string, double> out;
  for (const char* k : kDtypeKeys) {
    if (peaks.has(k)) out[k] = peaks.within(k, kMinTflops, kMaxTflops) * kTera;
  }
  return out;
}

std::vector<CacheSpec> readCaches(const yaml::MapReader& top) {
  std::vector<CacheSpec> out;
  if (!top.has("caches")) return out;
  YAML::Node list = top.get("caches");
  if (!list.IsSequence()) top.fail(list, "'caches' must be a list");
  for (size_t i = 0; i < list.size(); ++i) {
    yaml::MapReader c(list[i], top.source(), fmt::format("caches[{}]", i));
    c.checkKeys({"level", "size_mb"}, {"bandwidth_gbps"});
    CacheSpec cache;
    cache.level = c.str("level");
    cache.bytes = c.positiveBytes("size_mb", kMiB);
    if (c.has("bandwidth_gbps"))
      cache.bandwidth = c.within("bandwidth_gbps", kMinGbps, kMaxGbps) * kGiga;
    out.push_back(cache);
  }
  return out;
}

std::vector<LinkSpec> readLinks(const yaml::MapReader& top) {
  if (!top.has("links")) return {};
  YAML::Node list = top.get("links");
  if (!list.IsSequence()) top.fail(list, "'links' must be a list");
  return readLinkList(top, list);
}

}  // namespace

std::vector<LinkSpec> readLinkList(const yaml::MapReader& top, const YAML::Node& list) {
  std::vector<LinkSpec> out;
  for (size_t i = 0; i < list.size(); ++i) {
    yaml::MapReader l(list[i], top.source(), fmt::format("links[{}]", i));
    l.checkKeys({"name", "bandwidth_gbps", "latency_us"}, {});
    out.push_back({l.str("name"), l.within("bandwidth_gbps", kMinGbps, kMaxGbps) * kGiga,
                   l.within("latency_us", 0, kMaxLatencyUs) * kMicro});
  }
  return out;
}

const char* deviceKindName(DeviceKind kind) { return kind == DeviceKind::kGpu ? "gpu" : "cpu"; }

namespace {
// The peak_tflops key a tensor dtype reads.
const char* peakKey(core::DType dtype) {
  switch (dtype) {
    case core::DType::kFloat16:
      return "float16";
    case core::DType::kBFloat16:
      return "bfloat16";
    case core::DType::kFloat64:
      return "float64";
    case core::DType::kInt8:
    case core::DType::kUInt8:
      return "int8";
    default:
      return "float32";
  }
}
}  // namespace

double DeviceSpec::peakFlops(core::DType dtype) const {
  if (auto it = peak_flops.find(peakKey(dtype)); it != peak_flops.end()) return it->second;
  if (auto it = peak_flops.find("float32"); it != peak_flops.end()) return it->second;
  double best = 0;
  for (const auto& kv : peak_flops) best = std::max(best, kv.second);
  return best > 0 ? best : 1e12;
}

double DeviceSpec::listedPeakFlops(core::DType dtype) const {
  auto it = peak_flops.find(peakKey(dtype));
  return it == peak_flops.end() ? 0.0 : it->second;
}

int64_t DeviceSpec::lastLevelCacheBytes() const {
  int64_t best = 0;
  for (const CacheSpec& c : caches) best = std::max(best, c.bytes);
  return best;
}

int64_t DeviceSpec::privateCacheBytes() const {
  const int64_t last = lastLevelCacheBytes();
  int64_t best = 0;
  for (const CacheSpec& c : caches)
    if (c.bytes < last) best = std::max(best, c.bytes);
  return best;
}

double DeviceSpec::lastLevelCacheBandwidth() const {
  const CacheSpec* best = nullptr;
  for (const CacheSpec& c : caches) {
    if (!best || c.bytes > best->bytes) best = &c;
  }
  if (best && best->bandwidth > 0) return best->bandwidth;
  return kCacheOverDram * memory_bandwidth;
}

const LinkSpec* DeviceSpec::findLink(const std::string& link_name) const {
  for (const LinkSpec& l : links) {
    if (l.name == link_name) return &l;
  }
  return nullptr;
}

double DeviceSpec::ridgePoint(core::DType dtype) const {
  return peakFlops(dtype) / std::max(memory_bandwidth, 1.0);
}

DeviceSpec parseDeviceSpec(const std::string& yaml_text, const std::string& source) {
  YAML::Node root = yaml::parse(yaml_text, source);
  yaml::MapReader top(root, source, "device");
  top.checkKeys({"name", "kind", "peak_tflops", "memory_gb", "memory_bandwidth_gbps",
                 "compute_units", "clock_mhz"},
                {"caches", "links", "page_fault_us", "page_unmap_us", "cold_write_us_per_mib",
                 "reuse_cache_bytes", "memory_contention", "sources", "description"});
  DeviceSpec spec;
  spec.name = top.str("name");
  std::string kind = top.str("kind");
  if (kind == "gpu") {
    spec.kind = DeviceKind::kGpu;
  } else if (kind == "cpu") {
    spec.kind = DeviceKind::kCpu;
  } else {
    top.fail(top.get("kind"), fmt::format("'kind' must be 'gpu' or 'cpu', got '{}'", kind));
  }
  spec.peak_flops = readPeaks(top);
  spec.memory_bytes = top.positiveBytes("memory_gb", kGiga);
  spec.memory_bandwidth = top.within("memory_bandwidth_gbps", kMinGbps, kMaxGbps) * kGiga;
  spec.compute_units = top.positiveInt("compute_units");
  spec.clock_hz = top.within("clock_mhz", kMinClockMhz, kMaxClockMhz) * kMega;
  spec.caches = readCaches(top);
  spec.links = readLinks(top);
  if (top.has("page_fault_us")) spec.page_fault_us = top.nonNegative("page_fault_us");
  if (top.has("page_unmap_us")) spec.page_unmap_us = top.nonNegative("page_unmap_us");
  if (top.has("cold_write_us_per_mib"))
    spec.cold_write_us_per_mib = top.nonNegative("cold_write_us_per_mib");
  if (top.has("reuse_cache_bytes")) spec.reuse_cache_bytes = top.positive("reuse_cache_bytes");
  if (top.has("memory_contention")) spec.memory_contention = top.nonNegative("memory_contention");
  if (top.has("sources")) spec.sources = top.strList("sources");
  return spec;
}

DeviceSpec loadDeviceSpec(const std::string& path) {
  return parseDeviceSpec(core::readTextFile(path, "a device spec", core::InputUse::kModel), path);
}

std::string deviceSpecToYaml(const DeviceSpec& spec) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << spec.name;
  out << YAML::Key << "kind" << YAML::Value << deviceKindName(spec.kind);
  out << YAML::Key << "peak_tflops" << YAML::Value << YAML::BeginMap;
  for (const auto& kv : spec.peak_flops)
    out << YAML::Key << kv.first << YAML::Value << kv.second / kTera;
  out << YAML::EndMap;
  out << YAML::Key << "memory_gb" << YAML::Value << static_cast<double>(spec.memory_bytes) / kGiga;
  out << YAML::Key << "memory_bandwidth_gbps" << YAML::Value << spec.memory_bandwidth / kGiga;
  out << YAML::Key << "compute_units" << YAML::Value << spec.compute_units;
  out << YAML::Key << "clock_mhz" << YAML::Value << spec.clock_hz / kMega;
  if (!spec.caches.empty()) {
    out << YAML::Key << "caches" << YAML::Value << YAML::BeginSeq;
    for (const CacheSpec& c : spec.caches) {
      out << YAML::BeginMap << YAML::Key << "level" << YAML::Value << c.level;
      out << YAML::Key << "size_mb" << YAML::Value << static_cast<double>(c.bytes) / kMiB;
      if (c.bandwidth > 0)
        out << YAML::Key << "bandwidth_gbps" << YAML::Value << c.bandwidth / kGiga;
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (!spec.links.empty()) {
    out << YAML::Key << "links" << YAML::Value << YAML::BeginSeq;
    for (const LinkSpec& l : spec.links) {
      out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << l.name;
      out << YAML::Key << "bandwidth_gbps" << YAML::Value << l.bandwidth / kGiga;
      out << YAML::Key << "latency_us" << YAML::Value << l.latency / kMicro << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  if (spec.page_fault_us > 0)
    out << YAML::Key << "page_fault_us" << YAML::Value << spec.page_fault_us;
  if (spec.page_unmap_us > 0)
    out << YAML::Key << "page_unmap_us" << YAML::Value << spec.page_unmap_us;
  if (spec.cold_write_us_per_mib)
    out << YAML::Key << "cold_write_us_per_mib" << YAML::Value << *spec.cold_write_us_per_mib;
  if (spec.reuse_cache_bytes)
    out << YAML::Key << "reuse_cache_bytes" << YAML::Value << *spec.reuse_cache_bytes;
  if (spec.memory_contention)
    out << YAML::Key << "memory_contention" << YAML::Value << *spec.memory_contention;
  if (!spec.sources.empty()) {
    out << YAML::Key << "sources" << YAML::Value << YAML::BeginSeq;
    for (const std::string& s : spec.sources) out << s;
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

void saveDeviceSpec(const DeviceSpec& spec, const std::string& path) {
  core::updateModelFile(path, deviceSpecToYaml(spec));
}

}  // namespace tracetwin::predictors
