// A fake Inductor cache directory for compiled-step tests: kernel sources in
// Inductor's layout, Triton's binaries with their metadata JSON, .best_config
// files and the manifest scripts/capture.py --compile writes. The .cubin
// files hold no real code: nothing here is launched on a device.
#pragma once

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/traces.h"

namespace tracetwin::testing {

// An Inductor kernel file of PyTorch >= 2.6's shape.
inline std::string inductorSource(const std::string& kernel, const std::string& signature,
                                  const std::string& def_args,
                                  const std::string& grid_type = "Grid1D",
                                  const std::string& constants = "{}") {
  return fmt::format(
      R"py(import triton
import triton.language as tl

from torch._inductor.runtime import triton_helpers, triton_heuristics
from torch._inductor.runtime.hints import AutotuneHint, ReductionHint, TileHint, DeviceProperties
triton_helpers.set_driver_to_gpu()

@triton_heuristics.pointwise(
    size_hints={{'x': 16}}, 
    filename=__file__,
    triton_meta={{'signature': {}, 'device': DeviceProperties(type='cuda', index=0, multi_processor_count=132, cc=90, major=9, regs_per_multiprocessor=65536, max_threads_per_multi_processor=2048, warp_size=32), 'constants': {}, 'configs': [{{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]]}}]}},
    inductor_meta={{'grid_type': '{}', 'autotune_hints': set(), 'kernel_name': '{}', 'mutated_arg_names': [], 'optimize_mem': True}},
    min_elem_per_thread=0
)
@triton.jit
def {}({}):
    xnumel = 16
    xoffset = tl.program_id(0) * XBLOCK
)py",
      signature, constants, grid_type, kernel, kernel, def_args);
}

// Triton's metadata JSON of a kernel compiled by Triton >= 3.5 for sm_90.
inline std::string tritonMetadata(const std::string& name, int num_warps, int shared = 0,
                                  const std::string& extra = "") {
  return fmt::format(
      R"({{"hash": "0b1e", "target": {{"backend": "cuda", "arch": 90, "warp_size": 32}},
"num_warps": {}, "num_ctas": 1, "num_stages": 1, "cluster_dims": [1, 1, 1],
"launch_cooperative_grid": false, "launch_pdl": false, "shared": {}, "tmem_size": 0,
"global_scratch_size": 0, "global_scratch_align": 1, "profile_scratch_size": 0,
"profile_scratch_align": 1, "name": "{}"{}}})",
      num_warps, shared, name, extra);
}

class FakeInductorCache {
 public:
  const std::string& path() const { return dir_.path(); }

  // <dir>/<xx>/<file>: what the trace's kernel_file names.
  std::string source(const std::string& file, const std::string& text) {
    return write(file.substr(1, 2) + "/" + file, text);
  }
  // <dir>/<xx>/<stem>.best_config beside the source.
  void bestConfig(const std::string& file, const std::string& json) {
    const std::string stem = file.substr(0, file.rfind('.'));
    write(file.substr(1, 2) + "/" + stem + ".best_config", json);
  }
  // <dir>/triton/0/<hash>/<name>.cubin and .json; returns the directory
  // relative to the cache.
  std::string binary(const std::string& hash, const std::string& name,
                     const std::string& metadata) {
    const std::string rel = "triton/0/" + hash;
    write(rel + "/" + name + ".cubin",
          "\x7f"
          "ELF not a real cubin");
    write(rel + "/" + name + ".json", metadata);
    return rel;
  }
  void manifest(const std::string& json) { write("tracetwin_kernels.json", json); }

 private:
  std::string write(const std::string& rel, const std::string& bytes) {
    const std::filesystem::path p = std::filesystem::path(dir_.path()) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << bytes;
    return p.string();
  }

  TempDir dir_;
};

}  // namespace tracetwin::testing
