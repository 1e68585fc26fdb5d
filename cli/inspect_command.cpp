// `tracetwin inspect TRACE [--json]`: what a trace holds and what one
// iteration of it would replay (DESIGN.md "Operator selection").
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cli/command_registry.h"
#include "cli/keep_until_exit.h"
#include "core/chakra/chakra_trace.h"
#include "core/compiled_regions.h"
#include "core/graph.h"
#include "core/trace_reader.h"

namespace tracetwin::cli {
namespace {

using core::Graph;
using core::Node;
using core::NodeCategory;
using core::Selection;
using core::TensorValue;

constexpr size_t kTopOps = 15;

struct InspectSummary {
  double parse_ms = 0;
  Selection selection;
  core::CompiledSummary compiled;
  std::map<std::string, int64_t> by_category;
  std::vector<std::pair<std::string, int64_t>> histogram;  // most frequent first
  size_t storages = 0;
  int64_t input_bytes = 0;
  size_t input_tensors = 0;
};

// The memory an iteration starts with: storages reached by tensors whose first
// use among the selected ops is as an input (weights, data). Views share a
// storage, so each storage counts once, up to the furthest byte any view reaches.
void countInputBytes(const Graph& graph, InspectSummary& s) {
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, std::string>;
  std::set<Key> seen;
  std::map<std::pair<int64_t, std::string>, int64_t> storage_extent;
  for (core::NodeId id : s.selection.ops) {
    const Node& n = graph.node(id);
    for (int side = 0; side < 2; ++side) {
      for (const core::Value& v : side == 0 ? n.inputs : n.outputs) {
        core::forEachTensor(v, [&](const TensorValue& t) {
          if (!t.defined()) return;
          Key key{t.tensor_id, t.storage_id, t.offset, t.numel, t.itemsize, t.device};
          if (!seen.insert(key).second || side != 0) return;
          ++s.input_tensors;
          int64_t& extent = storage_extent[{t.storage_id, t.device}];
          extent = std::max(extent, (t.offset + t.numel) * t.itemsize);
        });
      }
    }
  }
  for (const auto& [storage, bytes] : storage_extent) s.input_bytes += bytes;
}

InspectSummary summarise(const Graph& graph, double parse_ms) {
  InspectSummary s;
  s.parse_ms = parse_ms;
  s.selection = core::selectTopLevelOps(graph);
  s.compiled = core::summarizeCompiled(graph, s.selection);
  std::unordered_map<std::string, int64_t> counts;
  for (core::NodeId id : s.selection.ops) {
    const Node& n = graph.node(id);
    ++s.by_category[core::nodeCategoryName(n.category)];
    ++counts[n.name];
  }
  s.histogram.assign(counts.begin(), counts.end());
  std::sort(s.histogram.begin(), s.histogram.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::set<std::pair<int64_t, std::string>> storages;
  for (const core::TensorRecord& t : graph.tensors()) storages.emplace(t.storage_id, t.device);
  s.storages = storages.size();
  countInputBytes(graph, s);
  return s;
}

// A Chakra ET's own figures: its nodes by type, CPU and GPU nodes, the
// bytes its collectives move.
std::optional<core::chakra::ChakraSummary> chakraSummary(const Graph& graph) {
  if (graph.format.rfind("Chakra", 0) != 0) return std::nullopt;
  core::chakra::ChakraSummary s;
  core::chakra::readChakraNodes(graph.source_path, &s);
  return s;
}

nlohmann::json chakraJson(const core::chakra::ChakraSummary& c) {
  return {{"version", c.version},     {"nodes", c.nodes},          {"node_types", c.node_types},
          {"cpu_nodes", c.cpu_nodes}, {"gpu_nodes", c.gpu_nodes}, {"comm_nodes", c.comm_nodes},
          {"comm_bytes", c.comm_bytes}};
}

nlohmann::json toJson(const Graph& graph, const InspectSummary& s) {
  nlohmann::json j;
  j["file"] = graph.source_path;
  j["schema"] = graph.schema;
  if (!graph.format.empty()) j["format"] = graph.format;
  if (const auto c = chakraSummary(graph)) j["chakra"] = chakraJson(*c);
  j["nodes"] = graph.nodes().size();
  j["threads"] = graph.threadRoots().size();
  j["top_level_ops"] = s.selection.ops.size();
  j["comm_ops"] = s.selection.comm_ops;
  j["triton_ops"] = s.selection.triton_ops;
  j["custom_ops"] = s.selection.custom_ops;
  j["compiled"] = {{"kernels", s.compiled.kernels},
                   {"forward_kernels", s.compiled.forward_kernels},
                   {"backward_kernels", s.compiled.backward_kernels},
                   {"regions", s.compiled.regions.size()},
                   {"regions_without_kernels", s.compiled.regions_without_kernels},
                   {"warnings", s.compiled.warnings}};
  j["ops_by_category"] = s.by_category;
  nlohmann::json hist = nlohmann::json::object();
  for (const auto& [name, count] : s.histogram) hist[name] = count;
  j["op_histogram"] = hist;
  j["tensors"] = graph.tensors().size();
  j["storages"] = s.storages;
  j["input_tensors"] = s.input_tensors;
  j["input_bytes"] = s.input_bytes;
  j["window"] = s.selection.window
                    ? nlohmann::json::array({s.selection.window->first, s.selection.window->second})
                    : nlohmann::json();
  j["warnings"] = graph.warnings;
  j["parse_ms"] = s.parse_ms;
  return j;
}

std::string humanBytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, units[u]);
}

void printText(const Graph& graph, const InspectSummary& s) {
  fmt::print("trace        {}\n", graph.source_path);
  fmt::print("schema       {}\n", graph.schema);
  if (!graph.format.empty()) fmt::print("format       {}\n", graph.format);
  if (const auto c = chakraSummary(graph)) {
    std::string types;
    for (const auto& [type, n] : c->node_types) types += fmt::format(", {} {}", type, n);
    fmt::print("chakra       {} nodes{}; {} CPU, {} GPU; {} comm nodes moving {}\n", c->nodes,
               types, c->cpu_nodes, c->gpu_nodes, c->comm_nodes, humanBytes(c->comm_bytes));
  }
  fmt::print("nodes        {}\n", graph.nodes().size());
  fmt::print("threads      {}\n", graph.threadRoots().size());
  if (s.selection.window) {
    fmt::print("iteration    ids {}..{} (between the first two ProfilerStep# labels)\n",
               s.selection.window->first, s.selection.window->second);
  } else {
    fmt::print("iteration    whole trace (fewer than two ProfilerStep# labels)\n");
  }
  fmt::print("top-level    {} ops:", s.selection.ops.size());
  for (const auto& [category, count] : s.by_category) fmt::print(" {} {}", count, category);
  fmt::print("\n");
  if (s.compiled.kernels > 0 || !s.compiled.regions.empty()) {
    fmt::print("compiled     {} Triton kernels ({} forward, {} backward) in {} compiled regions\n",
               s.compiled.kernels, s.compiled.forward_kernels, s.compiled.backward_kernels,
               s.compiled.regions.size());
  }
  fmt::print("tensors      {} distinct, {} storages\n", graph.tensors().size(), s.storages);
  fmt::print("inputs       {} tensors first seen as inputs, {} ({} bytes)\n", s.input_tensors,
             humanBytes(s.input_bytes), s.input_bytes);
  fmt::print("parse        {:.1f} ms\n", s.parse_ms);
  fmt::print("\nmost frequent top-level ops:\n");
  for (size_t i = 0; i < s.histogram.size() && i < kTopOps; ++i) {
    fmt::print("  {:>7}  {}\n", s.histogram[i].second, s.histogram[i].first);
  }
  for (const std::string& w : graph.warnings) fmt::print("warning: {}\n", w);
  for (const std::string& w : s.compiled.warnings) fmt::print("warning: {}\n", w);
}

std::function<void()> setupInspect(CLI::App& sub) {
  struct Options {
    std::string trace;
    bool json = false;
  };
  auto opts = std::make_shared<Options>();
  sub.add_option("trace", opts->trace, "Execution trace (.json or .json.gz, or a Chakra ET)")
      ->required();
  sub.add_flag("--json", opts->json, "Print one JSON object instead of text");
  return [opts] {
    const auto start = std::chrono::steady_clock::now();
    // Left to the OS at exit (cli/keep_until_exit.h): its teardown was 10-15% of the CPU.
    const Graph& graph = keepUntilExit(core::readTrace(opts->trace));
    const double parse_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const InspectSummary summary = summarise(graph, parse_ms);
    if (opts->json) {
      fmt::print("{}\n", toJson(graph, summary).dump());
    } else {
      printText(graph, summary);
    }
  };
}

}  // namespace

TRACETWIN_REGISTER_COMMAND(inspect, "Summarise an execution trace: ops, tensors, iteration",
                           setupInspect);

}  // namespace tracetwin::cli
