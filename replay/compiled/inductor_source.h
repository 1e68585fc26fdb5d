// What replay needs from one Inductor-generated Triton kernel file (the
// `kernel_file` of a trace's Triton node; Inductor writes one per kernel into
// its cache): the kernel's name, its arguments in order with their Triton
// types, the ones Triton compiled in as constants, and the launch grid's
// kind. Read from the text Inductor writes, not by running Python:
//
//   @triton_heuristics.pointwise(size_hints={'x': 16}, filename=__file__,
//       triton_meta={'signature': {'in_ptr0': '*fp32', 'xnumel': 'i32',
//                    'XBLOCK': 'constexpr'}, ..., 'constants': {}, ...},
//       inductor_meta={'grid_type': 'Grid1D', 'kernel_name': ..., ...})
//   @triton.jit
//   def triton_poi_fused_add_0(in_ptr0, xnumel, XBLOCK : tl.constexpr):
//
// Older Inductor keys the signature and constants by argument position
// ({0: '*fp32', 1: 'i32'}) and leaves constexpr arguments out of it; both
// read to the same result. Torch-free.
#pragma once

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace tracetwin::replay::compiled {

struct KernelArg {
  std::string name;
  std::string type;  // "*fp32", "i32", "fp64", ... or "constexpr"
};

struct InductorKernelSource {
  std::string kernel_name;          // from the `def` line
  std::string heuristic;            // "pointwise", "reduction", "persistent_reduction" ...
  std::vector<KernelArg> args;      // every argument of the def, in order
  std::set<std::string> constants;  // names Triton compiled in (not kernel parameters)
  std::string grid_type;            // "Grid1D", "Grid2D" ...; empty in older Inductor
};

// A kernel file that does not have the expected shape.
class SourceFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses the text of a kernel file; `path` names it in errors. Throws
// SourceFormatError naming what is missing.
InductorKernelSource parseInductorKernelSource(const std::string& text, const std::string& path);

}  // namespace tracetwin::replay::compiled
