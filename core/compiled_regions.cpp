#include "core/compiled_regions.h"

#include <fmt/core.h>

#include <array>
#include <unordered_map>

#include "core/text.h"

namespace tracetwin::core {
namespace {

using text::contains;
using text::endsWith;
using text::startsWith;

// RecordScope::BACKWARD_FUNCTION (ATen/record_function.h): autograd nodes
// such as "CompiledFunctionBackward" run under it.
constexpr int64_t kBackwardScope = 1;

// Compiled autograd's graphs have compile ids that start with '!'
// ("Torch-Compiled Region: !0/0"), and its own labels name it.
bool isCompiledAutogradLabel(std::string_view name) {
  return startsWith(name, "Torch-Compiled Region: !") || contains(name, "CompiledAutograd") ||
         contains(name, "compiled_autograd");
}

bool isBackwardLabel(const Node& n) {
  return n.scope == kBackwardScope || endsWith(n.name, "Backward") ||
         isCompiledAutogradLabel(n.name);
}

}  // namespace

std::string compiledKernelKind(std::string_view kernel_name) {
  struct Prefix {
    std::string_view prefix;
    const char* kind;
  };
  static constexpr std::array<Prefix, 7> kPrefixes = {{
      {"triton_poi_", "pointwise"},
      {"triton_red_", "reduction"},
      {"triton_per_", "persistent_reduction"},
      {"triton_tem_", "template"},
      {"triton_for_", "foreach"},
      {"triton_scan_", "scan"},
      {"triton_spl_", "scan"},
  }};
  for (const Prefix& p : kPrefixes) {
    if (startsWith(kernel_name, p.prefix)) return p.kind;
  }
  return "other";
}

bool isCompiledRegionLabel(std::string_view name) {
  return startsWith(name, "Torch-Compiled Region") || name == "CompiledFunction" ||
         name == "CompiledFunctionBackward" || startsWith(name, "## Call CompiledFxGraph") ||
         isCompiledAutogradLabel(name);
}

bool inBackwardPass(const Graph& graph, const Node& node) {
  // Parent chains are short (a few labels deep) and end at the root.
  for (const Node* n = &node; n != nullptr && n->id != graph.rootId();
       n = graph.findNode(n->parent)) {
    if (n->category == NodeCategory::kLabel && isBackwardLabel(*n)) return true;
  }
  return false;
}

CompiledSummary summarizeCompiled(const Graph& graph, const Selection& selection) {
  CompiledSummary s;
  const auto in_window = [&](NodeId id) {
    return !selection.window || (id > selection.window->first && id < selection.window->second);
  };
  std::unordered_map<NodeId, size_t> region_index;
  for (const Node& n : graph.nodes()) {
    if (n.category != NodeCategory::kLabel || !in_window(n.id) || !isCompiledRegionLabel(n.name))
      continue;
    region_index.emplace(n.id, s.regions.size());
    CompiledRegion r;
    r.id = n.id;
    r.name = n.name;
    r.backward = inBackwardPass(graph, n);
    r.innermost = true;
    s.regions.push_back(std::move(r));
  }
  // A region holding another is not innermost.
  for (const CompiledRegion& r : s.regions) {
    for (NodeId p = graph.node(r.id).parent; p != graph.rootId(); p = graph.node(p).parent) {
      if (auto it = region_index.find(p); it != region_index.end()) {
        s.regions[it->second].innermost = false;
      }
    }
  }
  for (NodeId id : selection.ops) {
    const Node& op = graph.node(id);
    const bool kernel = op.category == NodeCategory::kTriton;
    if (kernel) {
      ++s.kernels;
      ++(inBackwardPass(graph, op) ? s.backward_kernels : s.forward_kernels);
    }
    // Most steps have no compiled region: no parent chain to walk per op.
    if (region_index.empty()) continue;
    for (NodeId p = op.parent; p != graph.rootId(); p = graph.node(p).parent) {
      if (auto it = region_index.find(p); it != region_index.end()) {
        ++(kernel ? s.regions[it->second].kernels : s.regions[it->second].other_ops);
      }
    }
  }
  int64_t innermost = 0;
  for (const CompiledRegion& r : s.regions) {
    if (!r.innermost) continue;
    ++innermost;
    if (r.kernels == 0 && r.other_ops > 0) ++s.regions_without_kernels;
  }
  if (s.regions_without_kernels > 0 && s.kernels == 0) {
    s.warnings.push_back(fmt::format(
        "{} compiled region(s) recorded ATen calls but not one Inductor kernel: the trace was "
        "taken without torch.profiler running (Inductor records its kernel launches only "
        "then), so the fused kernels are neither selected nor counted in coverage; capture with "
        "scripts/capture.py --compile",
        s.regions_without_kernels));
  } else if (s.regions_without_kernels > 0) {
    s.warnings.push_back(fmt::format(
        "{} of {} compiled region(s) recorded ATen calls but no Inductor kernel (a graph "
        "without fused kernels, or kernels the trace did not record)",
        s.regions_without_kernels, innermost));
  }
  return s;
}

}  // namespace tracetwin::core
