// Binds a trace's Triton node to its compiled kernel: which recorded value
// goes to which kernel parameter, the grid from the numel arguments and the
// config's block sizes, the block from the warps, and the dynamic shared
// memory. The recorded values are CachingAutotuner.run's arguments (every
// kernel argument but the config's block sizes) and then the stream; the
// cubin takes the non-constexpr, non-constant ones in order, then the
// scratch pointers newer Triton appends. Torch-free: checked with fakes.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/graph.h"
#include "replay/compiled/inductor_cache.h"

namespace tracetwin::replay::compiled {

struct LaunchParam {
  enum class Kind : uint8_t {
    kTensor,  // the data pointer of the node's tensor input number `tensor`
    kScalar,  // `bits`, little-endian: the driver reads the parameter's own width
    kNull,    // a null pointer (scratch Triton never uses here)
  };
  Kind kind = Kind::kNull;
  int32_t tensor = -1;  // index among the node's defined-or-not tensor inputs, in order
  uint64_t bits = 0;
  std::string name;  // the kernel argument, for messages
};

struct LaunchPlan {
  std::array<uint32_t, 3> grid{1, 1, 1};
  uint32_t block_x = 0;  // num_warps * warp size
  uint32_t shared_bytes = 0;
  bool empty = false;  // a zero-sized grid: nothing to launch (Triton returns early too)
  std::vector<LaunchParam> params;
};

// The node's values do not fit the kernel (count, types, grid).
class LayoutError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws LayoutError naming the node, the kernel and what does not fit.
LaunchPlan planLaunch(const CompiledKernelSpec& spec, const core::Node& node);

}  // namespace tracetwin::replay::compiled
