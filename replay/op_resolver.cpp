#include "replay/op_resolver.h"

#include <ATen/core/jit_type.h>
#include <fmt/core.h>

#include "core/errors.h"
#include "core/op_schema.h"

namespace tracetwin::replay {
namespace {

// "int[2]" -> "int[]", "SymInt" -> "int": the spellings that differ between
// recorded schemas and c10's type names without changing what is passed.
std::string normaliseType(std::string t) {
  for (size_t p = t.find('['); p != std::string::npos; p = t.find('[', p + 1)) {
    size_t close = t.find(']', p);
    if (close != std::string::npos) t.erase(p + 1, close - p - 1);
  }
  for (size_t p = t.find("SymInt"); p != std::string::npos; p = t.find("SymInt")) {
    t.replace(p, 6, "int");
  }
  return t;
}

}  // namespace

std::optional<int> mapArguments(const core::Node& node, const c10::FunctionSchema& schema,
                                std::vector<int>* recorded_index) {
  const auto& reg = schema.arguments();
  const std::vector<core::SchemaArgument> empty;
  const auto& rec = node.schema ? node.schema->arguments : empty;
  const bool named = !rec.empty() && !rec.front().name.empty();
  const int inputs = static_cast<int>(node.inputs.size());
  recorded_index->assign(reg.size(), -1);
  int score = 0;
  std::vector<bool> used(node.inputs.size(), false);
  for (size_t k = 0; k < reg.size(); ++k) {
    int r = -1;
    if (named) {
      for (size_t j = 0; j < rec.size() && static_cast<int>(j) < inputs; ++j) {
        if (rec[j].name == reg[k].name()) r = static_cast<int>(j);
      }
    } else if (static_cast<int>(k) < inputs) {
      r = static_cast<int>(k);
    }
    if (r < 0) {
      if (!reg[k].default_value()) return std::nullopt;
      continue;
    }
    (*recorded_index)[k] = r;
    used[static_cast<size_t>(r)] = true;
    score += 2;
    if (named &&
        normaliseType(rec[static_cast<size_t>(r)].type) == normaliseType(reg[k].type()->str())) {
      score += 1;
    }
  }
  // Recorded arguments the candidate has no place for are lost: penalise,
  // more so when they carry a tensor (the op would do different work).
  for (size_t j = 0; j < used.size(); ++j) {
    if (!used[j]) score -= node.inputs[j].containsTensor() ? 4 : 1;
  }
  return score;
}

namespace {

// A recorded op_schema the reader could not parse (the Graph's warnings count
// them): the op is skipped for that, not for a missing schema.
std::string unparsedSchemaReason(const core::Node& node) {
  try {
    core::parseOpSchema(node.op_schema_text, "op_schema");
  } catch (const InputError& e) {
    return fmt::format("its recorded op_schema does not parse: {}", e.what());
  }
  return "its recorded op_schema was not parsed";
}

}  // namespace

const std::vector<c10::OperatorName>& OpResolver::overloadsOf(const std::string& name) {
  if (!indexed_) {
    // ~2,000 registered ops in LibTorch 1.13: index once per replay.
    for (const c10::OperatorName& op : c10::Dispatcher::singleton().getAllOpNames()) {
      overloads_[op.name].push_back(op);
    }
    indexed_ = true;
  }
  static const std::vector<c10::OperatorName> none;
  auto it = overloads_.find(name);
  return it == overloads_.end() ? none : it->second;
}

std::optional<ResolvedOp> OpResolver::resolve(const core::Node& node, std::string* reason) {
  if (!node.schema) {
    *reason = node.op_schema_text.empty() ? "no op_schema recorded" : unparsedSchemaReason(node);
    return std::nullopt;
  }
  const std::string name = node.schema->qualifiedName();
  const std::string& overload = node.schema->overload;
  auto& dispatcher = c10::Dispatcher::singleton();
  std::vector<int> index;
  if (auto handle = dispatcher.findSchema({name, overload})) {
    if (mapArguments(node, handle->schema(), &index)) return ResolvedOp{*handle, index, ""};
  }
  std::optional<ResolvedOp> best;
  int best_score = 0;
  for (const c10::OperatorName& candidate : overloadsOf(name)) {
    if (candidate.overload_name == overload) continue;
    auto handle = dispatcher.findSchema(candidate);
    if (!handle) continue;
    auto score = mapArguments(node, handle->schema(), &index);
    if (score && (!best || *score > best_score)) {
      best_score = *score;
      best = ResolvedOp{*handle, index, ""};
    }
  }
  auto full = [](const std::string& n, const std::string& o) {
    return o.empty() ? n : n + "." + o;
  };
  if (!best) {
    *reason = overloadsOf(name).empty()
                  ? fmt::format("operator {} is not registered in this LibTorch (--op-library loads the "
                                "library that registers it)",
                                name)
                  : fmt::format("no registered overload of {} accepts the recorded arguments of {}",
                                name, full(name, overload));
    return std::nullopt;
  }
  best->mapping = fmt::format("{} -> {} (by argument names)", full(name, overload),
                              full(name, best->handle.schema().overload_name()));
  return best;
}

}  // namespace tracetwin::replay
