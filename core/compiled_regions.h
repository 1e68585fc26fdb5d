// torch.compile in an execution trace: the labels that mark compiled
// regions, the Inductor kernels (kernel_backend "triton") selected inside
// them, forward or backward, and the regions whose kernels the trace did not
// record.
//
// Why a region can come without kernels: Inductor wraps each kernel launch in
// a record function (kernel name, kernel_file, kernel_backend) only while
// torch.profiler is on (`autograd_profiler._is_profiler_enabled` in
// CachingAutotuner.run); an ExecutionTraceObserver started on its own does
// not set that flag. Such a trace still shows the ATen calls Inductor leaves
// outside its kernels (convolutions, matmuls) and nothing of the fused rest,
// so a replay of it would report full coverage of a step missing most of its
// time. scripts/capture.py --compile records the step under the profiler.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/graph.h"

namespace tracetwin::core {

// What an Inductor kernel does, from its name's prefix (Inductor names them
// triton_<kind>_fused_<ops>_<n>): "pointwise" (poi), "reduction" (red),
// "persistent_reduction" (per), "template" (tem: GEMM/conv templates of
// max-autotune), "foreach" (for), "scan" (scan/spl), else "other".
std::string compiledKernelKind(std::string_view kernel_name);

// "Torch-Compiled Region: 0/0", "CompiledFunction", "CompiledFunctionBackward",
// "## Call CompiledFxGraph ...", compiled autograd's labels.
bool isCompiledRegionLabel(std::string_view name);

struct CompiledRegion {
  NodeId id = kNoNode;
  std::string name;
  bool backward = false;
  bool innermost = false;  // holds no other compiled-region label
  int64_t kernels = 0;     // selected Inductor kernels under it (nested regions included)
  int64_t other_ops = 0;   // other selected ops under it (ATen calls Inductor left outside)
};

struct CompiledSummary {
  int64_t kernels = 0;  // selected ops with kernel_backend "triton"
  int64_t forward_kernels = 0;
  int64_t backward_kernels = 0;
  std::vector<CompiledRegion> regions;  // in the selection window, in id order
  // Innermost regions with ATen ops but no kernel under them.
  int64_t regions_without_kernels = 0;
  // Said once, for reports: kernels missing from the trace.
  std::vector<std::string> warnings;
};

// Whether a selected op runs in the backward pass: under an autograd node
// (RecordScope BACKWARD_FUNCTION), a "...Backward" label or a compiled
// autograd region.
bool inBackwardPass(const Graph& graph, const Node& node);

CompiledSummary summarizeCompiled(const Graph& graph, const Selection& selection);

}  // namespace tracetwin::core
