// The meta file scripts/capture.py writes beside a trace: for TRACE
// "X.et.json.gz" it is "X.meta.json", with the original run's iteration time
// and thread count. Torch-free: the CLI reads it too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tracetwin::replay {

// The host of the original run, as capture.py describes it ("host"); what
// an older meta file leaves out stays unknown (0, -1, empty).
struct RecordedHost {
  std::string cpu_model;
  int cpu_family = -1;
  int cpu_model_number = -1;
  int64_t logical_cpus = 0;
  double clock_mhz = 0;
  std::vector<std::pair<std::string, int64_t>> caches;  // ("L2", bytes), data/unified
};

struct TraceMeta {
  std::string path;         // the meta file read
  double iteration_ms = 0;  // median iteration time of the original run
  // Median CPU time of the process per step (capture.py since issue 40);
  // 0 in older meta files.
  double iteration_cpu_ms = 0;
  // A multi-rank capture (capture.py --nproc): the job's step, the median
  // over steps of the slowest rank's time; 0 for a single-process capture.
  double job_step_ms = 0;
  int samples = 0;          // iterations behind iteration_ms
  int threads = 0;          // intra-op threads of the original run
  std::string torch_version;
  std::string device;
  std::optional<RecordedHost> host;
};

// "dir/X.et.json.gz" -> "dir/X.meta.json" (also ".et.json", ".json.gz", ".json").
std::string metaPathForTrace(const std::string& trace_path);

// Reads the meta file of `trace_path` when it exists; nullopt when absent.
// Throws InputError naming the file and key when it exists but is malformed.
std::optional<TraceMeta> readTraceMeta(const std::string& trace_path);

}  // namespace tracetwin::replay
