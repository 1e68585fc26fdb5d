#include "predictors/specs/device_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/errors.h"
#include "predictors/specs/system_spec.h"
#include "tests/support/paths.h"

namespace tracetwin::predictors {
namespace {

using ::testing::HasSubstr;
using tracetwin::testing::sourcePath;

const char* kMinimal = R"(name: test-gpu
kind: gpu
peak_tflops: {float32: 10, bfloat16: 100}
memory_gb: 16
memory_bandwidth_gbps: 1000
compute_units: 80
clock_mhz: 1500
)";

std::string errorOf(const std::string& text) {
  try {
    parseDeviceSpec(text, "spec.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// `text` with the value of its line `key: ...` replaced by `value`.
std::string withValue(std::string text, const std::string& key, const std::string& value) {
  const size_t at = text.find(key + ": ");
  EXPECT_NE(at, std::string::npos) << key << " not in:\n" << text;
  if (at != std::string::npos) text.replace(at, text.find('\n', at) - at, key + ": " + value);
  return text;
}

TEST(DeviceSpec, ShippedDevicesLoadWithDatasheetFigures) {
  DeviceSpec h100 = loadDeviceSpec(sourcePath("configs/devices/h100.yaml"));
  EXPECT_EQ(h100.name, "H100-SXM5-80GB");
  EXPECT_DOUBLE_EQ(h100.peakFlops(core::DType::kBFloat16), 989e12);
  EXPECT_DOUBLE_EQ(h100.memory_bandwidth, 3350e9);
  EXPECT_EQ(h100.compute_units, 132);
  EXPECT_EQ(h100.lastLevelCacheBytes(), 50LL * 1024 * 1024);
  ASSERT_NE(h100.findLink("nvlink"), nullptr);
  EXPECT_DOUBLE_EQ(h100.findLink("nvlink")->bandwidth, 450e9);
  for (const char* f : {"a100", "h200", "b200"}) {
    DeviceSpec d = loadDeviceSpec(sourcePath(std::string("configs/devices/") + f + ".yaml"));
    EXPECT_GT(d.peakFlops(core::DType::kFloat16), d.peakFlops(core::DType::kFloat32)) << f;
    EXPECT_FALSE(d.sources.empty()) << f;
  }
  EXPECT_DOUBLE_EQ(loadDeviceSpec(sourcePath("configs/devices/h200.yaml")).memory_bandwidth,
                   4800e9);
}

TEST(DeviceSpec, RidgePointIsPeakOverBandwidth) {
  DeviceSpec d = parseDeviceSpec(kMinimal, "x");
  EXPECT_DOUBLE_EQ(d.ridgePoint(core::DType::kBFloat16), 100e12 / 1000e9);
  // int64 has no entry: falls back to float32.
  EXPECT_DOUBLE_EQ(d.peakFlops(core::DType::kInt64), 10e12);
}

TEST(DeviceSpec, UnknownKeyNamesLineAndColumn) {
  std::string text = std::string(kMinimal) + "memroy_gb: 3\n";
  EXPECT_THAT(errorOf(text), HasSubstr("spec.yaml:8:1: unknown key 'memroy_gb'"));
  std::string nested = R"(name: g
kind: gpu
peak_tflops: {float32: 10, fp8: 4}
memory_gb: 16
memory_bandwidth_gbps: 1000
compute_units: 80
clock_mhz: 1500
)";
  EXPECT_THAT(errorOf(nested), HasSubstr("spec.yaml:3:28: unknown key 'fp8' in peak_tflops"));
}

TEST(DeviceSpec, AKeyThatIsNotANameIsAnInputError) {
  // YAML's explicit-key form makes a key of any node. The fuzzer's first
  // find (fuzz/device_spec_fuzz.cpp): a '?' at the start of a line of
  // peak_tflops made the mapping after it a key of the device, and the key
  // check's conversion threw yaml-cpp's exception, not an InputError.
  std::string complex_key = kMinimal;
  complex_key.replace(complex_key.find("peak_tflops: {float32: 10, bfloat16: 100}"), 41,
                      "peak_tflops:\n  float32: 10\n?  float64: 5\n");
  EXPECT_THAT(errorOf(complex_key), HasSubstr("spec.yaml:5:4: keys in device must be plain names"));
  EXPECT_THAT(errorOf(std::string(kMinimal) + "? [a, b]\n: 1\n"),
              HasSubstr("spec.yaml:8:3: keys in device must be plain names"));
}

TEST(DeviceSpec, SizesAndCountsBeyondTwoToTheSixtySecondAreErrorsNotOverflows) {
  // The fuzzer's second find: memory_gb 2.6e17 overflowed the int64_t bytes.
  std::string memory = kMinimal;
  memory.replace(memory.find("memory_gb: 16"), 13, "memory_gb: 257276502015999998");
  EXPECT_THAT(errorOf(memory), HasSubstr("spec.yaml:4:12: 'memory_gb' must be at most 4.61169e+09 (2^62 bytes), got 2.57277e+17"));
  std::string units = kMinimal;
  units.replace(units.find("compute_units: 80"), 17, "compute_units: 1e30");
  EXPECT_THAT(errorOf(units), HasSubstr("'compute_units' must be a positive integer"));
  EXPECT_THAT(errorOf(std::string(kMinimal) + "caches: [{level: L2, size_mb: 1e300}]\n"),
              HasSubstr("'size_mb' must be at most 4.39805e+12 (2^62 bytes), got 1e+300"));
}

TEST(DeviceSpec, RatesAndClocksFarFromAnyDeviceAreErrors) {
  // 1e-300 GB/s was read, and predict blamed the model set for the infinite
  // op times that followed ("check the model set's files").
  EXPECT_THAT(errorOf(withValue(kMinimal, "memory_bandwidth_gbps", "1e-300")),
              HasSubstr("spec.yaml:5:24: 'memory_bandwidth_gbps' must be from 0.001 to 1e+06, got "
                        "1e-300"));
  EXPECT_THAT(errorOf(withValue(kMinimal, "clock_mhz", "1e-300")),
              HasSubstr("'clock_mhz' must be from 1 to 100000"));
  EXPECT_THAT(errorOf(withValue(kMinimal, "peak_tflops", "{float32: 1e30}")),
              HasSubstr("'float32' must be from 1e-06 to 1e+06"));
  EXPECT_THAT(errorOf(std::string(kMinimal) +
                      "links: [{name: nvlink, bandwidth_gbps: 450, latency_us: 1e300}]\n"),
              HasSubstr("'latency_us' must be from 0 to 1e+07"));
  // A CPU's reference-BLAS peak (0.003 TFLOP/s) is one.
  EXPECT_EQ(errorOf(withValue(kMinimal, "peak_tflops", "{float32: 0.003}")), "no error");
}

TEST(DeviceSpec, NamesAreOneLineOfText) {
  // The fuzzer's third find: a link named "pcie\n\n..." loaded, and the
  // writer folded its newlines differently on the way back.
  std::string name = kMinimal;
  name.replace(name.find("name: test-gpu"), 14, "name: \"test\\n\\ngpu\"");
  EXPECT_THAT(errorOf(name),
              HasSubstr("spec.yaml:1:7: 'name' in device must be one line of UTF-8 text"));
  EXPECT_THAT(errorOf(std::string(kMinimal) +
                      "links: [{name: \"pcie\\n\", bandwidth_gbps: 28, latency_us: 2}]\n"),
              HasSubstr("'name' in links[0] must be one line of UTF-8 text"));
  EXPECT_THAT(errorOf(std::string(kMinimal) + "sources: [\"a\\rb\"]\n"),
              HasSubstr("'sources' entries must be one line of UTF-8 text"));
  // Found by the fuzzer (2026-11-29): 0xc0 0x83, an overlong encoding of
  // U+0003, was read as it was and written back as that control character.
  EXPECT_THAT(errorOf(std::string(kMinimal) + "sources: [\"datasheet \xc0\x83\"]\n"),
              HasSubstr("'sources' entries must be one line of UTF-8 text"));
  EXPECT_THAT(errorOf(std::string(kMinimal) + "sources: [\"A100 \xff\"]\n"),
              HasSubstr("'sources' entries must be one line of UTF-8 text"));
  EXPECT_EQ(errorOf(std::string(kMinimal) + "sources: [\"2 \xc2\xb5s latency\"]\n"),
            "no error");  // "µs": well-formed UTF-8
}

TEST(DeviceSpec, ByteSizesAreRoundedSoAWrittenSpecReadsBackTheSame) {
  // The fuzzer's fourth find: 2,007,018,905 bytes written as memory_gb
  // 2.0070189049999998 read back as 2,007,018,904.
  DeviceSpec spec = parseDeviceSpec(kMinimal, "spec.yaml");
  spec.memory_bytes = 2007018905;
  const DeviceSpec again = parseDeviceSpec(deviceSpecToYaml(spec), "again.yaml");
  EXPECT_EQ(again.memory_bytes, 2007018905);
}

TEST(DeviceSpec, ARepeatedKeyIsAnError) {
  // yaml-cpp keeps both and reads the first: the second would be ignored.
  EXPECT_THAT(errorOf(std::string(kMinimal) + "compute_units: 2\n"),
              HasSubstr("spec.yaml:8:1: key 'compute_units' repeated in device"));
}

TEST(DeviceSpec, MissingKeyAndWrongTypeAreErrors) {
  std::string missing = kMinimal;
  missing.erase(missing.find("clock_mhz"));
  EXPECT_THAT(errorOf(missing), HasSubstr("missing key 'clock_mhz' in device"));
  std::string wrong = kMinimal;
  wrong.replace(wrong.find("1000"), 4, "fast");
  EXPECT_THAT(errorOf(wrong),
              HasSubstr("spec.yaml:5:24: 'memory_bandwidth_gbps' must be a number"));
  std::string negative = kMinimal;
  negative.replace(negative.find("80"), 2, "-8");
  EXPECT_THAT(errorOf(negative), HasSubstr("'compute_units' must be a positive integer"));
  EXPECT_THAT(errorOf("name: [unclosed\n"), HasSubstr("YAML syntax error"));
  std::string kind = kMinimal;
  kind.replace(kind.find("kind: gpu") + 6, 3, "tpu");
  EXPECT_THAT(errorOf(kind), HasSubstr("spec.yaml:2:7: 'kind' must be 'gpu' or 'cpu'"));
}

TEST(DeviceSpec, SaveThenLoadRoundTrips) {
  DeviceSpec d = loadDeviceSpec(sourcePath("configs/devices/a100.yaml"));
  auto path = std::filesystem::temp_directory_path() / "tracetwin_spec_roundtrip.yaml";
  saveDeviceSpec(d, path.string());
  DeviceSpec back = loadDeviceSpec(path.string());
  std::filesystem::remove(path);
  EXPECT_EQ(back.name, d.name);
  EXPECT_EQ(back.peak_flops, d.peak_flops);
  EXPECT_NEAR(back.memory_bandwidth, d.memory_bandwidth, 1e-3);
  EXPECT_EQ(back.compute_units, d.compute_units);
  ASSERT_EQ(back.links.size(), d.links.size());
  EXPECT_NEAR(back.links[0].latency, d.links[0].latency, 1e-12);
  EXPECT_EQ(back.sources, d.sources);
}

TEST(DeviceSpec, MeasuredPageFaultCostRoundTripsAndMustNotBeNegative) {
  DeviceSpec d = loadDeviceSpec(sourcePath("configs/devices/a100.yaml"));
  EXPECT_EQ(d.page_fault_us, 0);  // optional: datasheets have no such figure
  d.page_fault_us = 1.37;
  d.page_unmap_us = 0.25;
  DeviceSpec back = parseDeviceSpec(deviceSpecToYaml(d), "spec.yaml");
  EXPECT_DOUBLE_EQ(back.page_fault_us, 1.37);
  EXPECT_DOUBLE_EQ(back.page_unmap_us, 0.25);
  EXPECT_THAT(errorOf(withValue(deviceSpecToYaml(d), "page_fault_us", "-1")),
              HasSubstr("page_fault_us"));
}

TEST(DeviceSpec, MeasuredColdWriteCostIsOptionalRoundTripsAndMustNotBeNegative) {
  DeviceSpec d = loadDeviceSpec(sourcePath("configs/devices/a100.yaml"));
  EXPECT_FALSE(d.cold_write_us_per_mib.has_value());
  EXPECT_EQ(deviceSpecToYaml(d).find("cold_write_us_per_mib"), std::string::npos);
  for (double us : {0.0, 27.58}) {  // 0 is a measurement: cold lines cost nothing more
    d.cold_write_us_per_mib = us;
    const DeviceSpec back = parseDeviceSpec(deviceSpecToYaml(d), "spec.yaml");
    ASSERT_TRUE(back.cold_write_us_per_mib.has_value()) << us;
    EXPECT_DOUBLE_EQ(*back.cold_write_us_per_mib, us);
  }
  // A negative one is an error naming the key.
  EXPECT_THAT(errorOf(withValue(deviceSpecToYaml(d), "cold_write_us_per_mib", "-3")),
              HasSubstr("cold_write_us_per_mib"));
}

TEST(DeviceSpec, MeasuredReuseCapacityIsOptionalRoundTripsAndMustBePositive) {
  DeviceSpec d = loadDeviceSpec(sourcePath("configs/devices/a100.yaml"));
  EXPECT_FALSE(d.reuse_cache_bytes.has_value());
  EXPECT_EQ(deviceSpecToYaml(d).find("reuse_cache_bytes"), std::string::npos);
  d.reuse_cache_bytes = 46539583.0;
  const DeviceSpec back = parseDeviceSpec(deviceSpecToYaml(d), "spec.yaml");
  ASSERT_TRUE(back.reuse_cache_bytes.has_value());
  EXPECT_DOUBLE_EQ(*back.reuse_cache_bytes, 46539583.0);
  // Zero is an error naming the key.
  EXPECT_THAT(errorOf(withValue(deviceSpecToYaml(d), "reuse_cache_bytes", "0")),
              HasSubstr("reuse_cache_bytes"));
}

TEST(DeviceSpec, MemoryContentionIsOptionalRoundTripsAndMustNotBeNegative) {
  DeviceSpec d = loadDeviceSpec(sourcePath("configs/devices/a100.yaml"));
  EXPECT_FALSE(d.memory_contention.has_value());
  EXPECT_EQ(deviceSpecToYaml(d).find("memory_contention"), std::string::npos);
  d.memory_contention = 0.3;
  const DeviceSpec back = parseDeviceSpec(deviceSpecToYaml(d), "spec.yaml");
  ASSERT_TRUE(back.memory_contention.has_value());
  EXPECT_DOUBLE_EQ(*back.memory_contention, 0.3);
  EXPECT_THAT(errorOf(withValue(deviceSpecToYaml(d), "memory_contention", "-0.1")),
              HasSubstr("memory_contention"));
}

TEST(SystemSpec, DgxH100LoadsItsDeviceAndPicksLinks) {
  SystemSpec s = loadSystemSpec(sourcePath("configs/systems/dgx-h100.yaml"));
  EXPECT_EQ(s.worldSize(), 8);
  EXPECT_EQ(s.device.name, "H100-SXM5-80GB");
  EXPECT_EQ(s.linkFor(8).name, "nvlink");
  EXPECT_EQ(s.linkFor(16).name, "infiniband");
  EXPECT_DOUBLE_EQ(s.linkFor(16).bandwidth, 50e9);
  EXPECT_NO_THROW(loadSystemSpec(sourcePath("configs/systems/dgx-a100.yaml")));
}

TEST(SystemSpec, TopologyMustNameADefinedLink) {
  auto path = std::filesystem::temp_directory_path() / "tracetwin_bad_system.yaml";
  std::ofstream(path)
      << "name: x\ndevice: " << sourcePath("configs/devices/h100.yaml")
      << "\ndevices_per_node: 8\nnodes: 2\ntopology:\n  intra_node: nvlink\n"
         "  inter_node: ethernet\nlinks:\n  - {name: nvlink, bandwidth_gbps: 450, latency_us: 2}\n";
  try {
    loadSystemSpec(path.string());
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(":7:15: topology.inter_node names link 'ethernet'"));
  }
  std::filesystem::remove(path);
}

// 2^62 devices per node on 4 nodes overflowed the world size (int64_t).
TEST(SystemSpec, RefusesClustersOfMoreDevicesThanAGroupHolds) {
  auto path = std::filesystem::temp_directory_path() / "tracetwin_huge_system.yaml";
  auto errorFor = [&](const std::string& per_node, const std::string& nodes) {
    std::ofstream(path) << "name: x\ndevice: " << sourcePath("configs/devices/h100.yaml")
                        << "\ndevices_per_node: " << per_node << "\nnodes: " << nodes
                        << "\ntopology:\n  intra_node: nvlink\n  inter_node: nvlink\nlinks:\n"
                           "  - {name: nvlink, bandwidth_gbps: 450, latency_us: 2}\n";
    try {
      loadSystemSpec(path.string());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(errorFor("4611686018427387904", "4"),
              HasSubstr(":3:19: 'devices_per_node' must be an integer from 1 to 16777216"));
  EXPECT_THAT(errorFor("4096", "8192"),
              HasSubstr(":4:8: 8192 nodes of 4096 devices: expected a cluster of at most 2^24"));
  EXPECT_THAT(errorFor("0", "1"), HasSubstr("'devices_per_node' must be an integer from 1"));
  EXPECT_EQ(errorFor("8", "2048"), "accepted");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tracetwin::predictors
