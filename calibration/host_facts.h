// What the OS says about the host CPU (/proc/cpuinfo, /proc/meminfo, sysfs):
// the facts a CPU calibration records and `tracetwin host` compares. Reads
// files only: no replay, no LibTorch, so the torch-free tracetwin links it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "predictors/specs/device_spec.h"

namespace tracetwin::calibration {

// What the OS says about the host CPU. Fields are 0/empty when not found.
struct HostFacts {
  std::string cpu_model;  // /proc/cpuinfo "model name"; VMs often say only "AMD EPYC"
  // /proc/cpuinfo "cpu family" and "model": they tell two CPUs of one name
  // apart (the development VM's EPYC went from family 25 to 26). -1 unknown.
  int cpu_family = -1;
  int cpu_model_number = -1;
  int64_t logical_cpus = 0;
  double clock_hz = 0;
  int64_t memory_bytes = 0;
  std::vector<predictors::CacheSpec> caches;  // data/unified caches, innermost first
};

// `sysfs_cpu_dir` is /sys/devices/system/cpu/cpu0 normally (tests point it at
// a fixture); `proc_dir` is /proc.
HostFacts readHostFacts(const std::string& sysfs_cpu_dir = "/sys/devices/system/cpu/cpu0",
                        const std::string& proc_dir = "/proc");

}  // namespace tracetwin::calibration
