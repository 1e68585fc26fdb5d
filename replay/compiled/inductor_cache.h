// Inductor's cache directory of a run (TORCHINDUCTOR_CACHE_DIR), read for
// what launching one of its compiled kernels from C++ takes:
//
//   <dir>/<xx>/<kernel_file>.py        the kernel's source: arguments, types, grid kind
//   <dir>/<xx>/<kernel_file>.best_config  the autotuned launch config (block sizes, warps)
//   <dir>/triton/<device>/<hash>/<name>.cubin   the compiled kernel
//   <dir>/triton/<device>/<hash>/<name>.json    Triton's metadata: warps, shared memory,
//                                               scratch parameters, launch attributes
//   <dir>/tracetwin_kernels.json        written by scripts/capture.py --compile: for each
//                                       kernel launched, the config it ran with and the
//                                       directory of its binary (no guessing)
//
// Without the manifest a kernel is found by its source, its .best_config and
// the one binary of that name whose warps match; kernels whose config was not
// autotuned (one candidate) have no .best_config and need the manifest.
// Torch-free: read and tested on any host.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "replay/compiled/inductor_source.h"

namespace tracetwin::replay::compiled {

// One compiled kernel binary and Triton's metadata beside it.
struct TritonBinary {
  std::string cubin_path;
  std::string metadata_path;
  std::string name;  // the kernel's entry point in the cubin
  int num_warps = 0;
  int warp_size = 32;
  int64_t shared_bytes = 0;  // dynamic shared memory per block
  // Triton >= 3.3 appends a global-scratch pointer to every kernel's
  // parameters, >= 3.5 a profile-scratch pointer too; null when their size is 0.
  bool global_scratch_param = false;
  bool profile_scratch_param = false;
  // Why this binary cannot be launched by cuLaunchKernel as built (scratch
  // memory to allocate, clusters, cooperative or PDL launches, TMA
  // descriptors); empty when it can.
  std::string unsupported;
};

// Everything a launch needs, before the trace's values are bound.
struct CompiledKernelSpec {
  std::string name;
  std::string kernel_file;
  std::vector<KernelArg> args;                 // every argument, in order
  std::set<std::string> constants;             // compiled in: not passed to the cubin
  std::map<std::string, int64_t> block_sizes;  // XBLOCK, YBLOCK, R0_BLOCK ... of the config
  int num_warps = 0;                           // of the config
  std::string grid_type;                       // "Grid1D" ...; empty: from the numel arguments
  TritonBinary binary;
  std::string found_by;  // "manifest" or "source+best_config"
};

class InductorCache {
 public:
  // Scans `dir`. Throws InputError when it is not a directory, or when its
  // manifest is not valid JSON of the expected layout (file and key named).
  static InductorCache open(const std::string& dir);

  // The kernel named `name` whose source file is `kernel_file` (a basename;
  // may be empty). nullopt with `why` when it is not there or cannot be
  // launched; the replay then falls back to a stand-in and reports `why`.
  std::optional<CompiledKernelSpec> find(const std::string& name, const std::string& kernel_file,
                                         std::string* why) const;

  const std::string& dir() const { return dir_; }
  size_t binaryCount() const { return binaries_.size(); }
  size_t sourceCount() const { return sources_.size(); }
  bool hasManifest() const { return !manifest_.empty(); }

 private:
  struct ManifestEntry {
    std::string name;
    std::string kernel_file;
    std::string binary_dir;  // relative to the cache directory
    std::vector<KernelArg> args;
    std::set<std::string> constants;
    std::map<std::string, int64_t> block_sizes;
    int num_warps = 0;
    std::string grid_type;
  };

  void readManifest(const std::string& path);
  std::optional<CompiledKernelSpec> fromManifest(const ManifestEntry& e, std::string* why) const;
  std::optional<CompiledKernelSpec> fromSource(const std::string& name,
                                               const std::string& kernel_file,
                                               std::string* why) const;

  std::string dir_;
  std::vector<ManifestEntry> manifest_;
  std::unordered_map<std::string, std::string> sources_;       // basename -> path
  std::unordered_map<std::string, std::string> best_configs_;  // source path stem -> path
  std::vector<TritonBinary> binaries_;
};

// Reads Triton's metadata JSON beside a .cubin. Throws InputError naming the
// file when it is not JSON or lacks the name, warps or shared memory.
TritonBinary readTritonBinary(const std::string& metadata_path, const std::string& cubin_path);

}  // namespace tracetwin::replay::compiled
