#include "predictors/specs/index_distribution_spec.h"

#include <fmt/core.h>

#include <map>
#include <set>
#include <tuple>

#include "core/errors.h"
#include "core/sparse_layout.h"
#include "predictors/kernels/feature_shapes.h"
#include "predictors/specs/yaml_strict.h"

namespace tracetwin::predictors {
namespace {

namespace y = yaml;

std::string markOf(const std::string& source, const YAML::Node& at) {
  const YAML::Mark m = at.Mark();
  return m.is_null() ? source : fmt::format("{}:{}:{}", source, m.line + 1, m.column + 1);
}

IndexDistributionRule readIndexRule(const YAML::Node& node, const std::string& source, size_t i) {
  y::MapReader m(node, source, fmt::format("tables[{}]", i));
  m.checkKeys({}, {"node", "rows", "dim", "zipf", "first_row", "name"});
  IndexDistributionRule r;
  r.where = markOf(source, node);
  if (m.has("node") == m.has("rows")) {
    m.fail(node, "each entry names its lookup by exactly one of 'node' (the op id) or 'rows' "
                 "(with 'dim': the weight's shape)");
  }
  if (m.has("node")) {
    if (m.has("dim")) m.fail(m.get("dim"), "'dim' goes with 'rows', not with 'node'");
    const YAML::Node n = m.get("node");
    try {
      r.node = y::plainAs<int64_t>(n);
    } catch (const YAML::Exception&) {
      m.fail(n, "'node' must be an op id (an integer)");
    }
    if (r.node < 0) m.fail(n, fmt::format("'node' must be an op id >= 0, got {}", r.node));
  } else {
    r.rows = m.positiveInt("rows");
    if (m.has("dim")) r.dim = m.positiveInt("dim");
  }
  if (m.has("zipf")) r.zipf = m.nonNegative("zipf");
  if (m.has("first_row")) {
    const YAML::Node f = m.get("first_row");
    if (!(r.zipf > 0)) m.fail(f, "'first_row' places a shard in a Zipf table: it needs 'zipf' > 0");
    try {
      r.first_row = y::plainAs<int64_t>(f);
    } catch (const YAML::Exception&) {
      m.fail(f, "'first_row' must be a row number (an integer >= 0)");
    }
    // At most 2^62, as 'rows' is: row first_row + rows + 1 then fits in 64 bits (2^63-1 was
    // read, and the replay's Zipf weights overflowed).
    constexpr int64_t kMaxFirstRow = int64_t{1} << 62;
    if (r.first_row < 0 || r.first_row > kMaxFirstRow) {
      m.fail(f, fmt::format("'first_row' must be from 0 to 2^62, got {}", r.first_row));
    }
  }
  if (m.has("name")) r.name = m.str("name");
  return r;
}

bool isLookupOp(const core::Node& n) {
  const std::string name = n.schema ? n.schema->qualifiedName() : n.name.str();
  return name == "aten::embedding" || name == "aten::embedding_bag" ||
         name == "aten::_embedding_bag" || name == "aten::_embedding_bag_forward_only";
}

// The lookup's weight and indices (schema names; positions 0 and 1 without).
const core::TensorValue* lookupArg(const core::Node& n, const char* name, size_t fallback) {
  size_t at = fallback;
  if (n.schema) {
    for (size_t i = 0; i < n.schema->arguments.size(); ++i) {
      if (n.schema->arguments[i].name == name) at = i;
    }
  }
  if (at >= n.inputs.size() || !n.inputs[at].isTensor()) return nullptr;
  return &*n.inputs[at].tensor;
}

}  // namespace

IndexDistributionSpec parseIndexDistributions(const std::string& text, const std::string& source) {
  const YAML::Node root = y::parse(text, source);
  y::MapReader top(root, source, "index distributions");
  top.checkKeys({"tables"}, {});
  const YAML::Node tables = top.get("tables");
  if (!tables.IsSequence()) {
    top.fail(tables, "'tables' must be a list of {node | rows[, dim], zipf[, first_row], name}");
  }
  IndexDistributionSpec spec;
  spec.source = source;
  std::map<core::NodeId, std::string> nodes;
  std::map<std::pair<int64_t, int64_t>, std::string> shapes;
  for (size_t i = 0; i < tables.size(); ++i) {
    IndexDistributionRule r = readIndexRule(tables[i], source, i);
    const std::string* before = nullptr;
    if (r.node != core::kNoNode) {
      auto [it, fresh] = nodes.emplace(r.node, r.where);
      if (!fresh) before = &it->second;
    } else {
      auto [it, fresh] = shapes.emplace(std::make_pair(r.rows, r.dim), r.where);
      if (!fresh) before = &it->second;
    }
    if (before != nullptr) {
      y::failAt(source, tables[i],
                fmt::format("tables[{}] names the same lookup as the entry at {}", i, *before));
    }
    spec.tables.push_back(std::move(r));
  }
  return spec;
}

IndexDistributionSpec loadIndexDistributions(const std::string& path) {
  return parseIndexDistributions(y::readTextFile(path, "an index distribution file"), path);
}

ResolvedIndexDistributions resolveIndexDistributions(const IndexDistributionSpec& spec,
                                                     const core::Graph& graph) {
  ResolvedIndexDistributions out;
  std::map<core::NodeId, const IndexDistributionRule*> by_node;
  std::map<std::pair<int64_t, int64_t>, const IndexDistributionRule*> by_shape;
  std::set<const IndexDistributionRule*> used;
  for (const IndexDistributionRule& r : spec.tables) {
    if (r.node != core::kNoNode) {
      const core::Node* n = graph.findNode(r.node);
      if (n == nullptr || !isLookupOp(*n)) {
        throw InputError(fmt::format(
            "{}: node {} is {} in {}, not an embedding lookup (embedding, embedding_bag)",
            r.where, r.node, n ? "'" + n->name + "'" : "absent", graph.source_path));
      }
      by_node[r.node] = &r;
    } else {
      by_shape[{r.rows, r.dim}] = &r;
    }
  }
  // The lookups, outermost first (ids ascend in execution order, a child
  // after its parent): a lookup inside a matched lookup shares its indices.
  std::map<std::pair<int64_t, int64_t>, ResolvedIndexDistributions::Reader> by_indices;
  // Which lookup and entry set each indices tensor's law.
  std::map<std::pair<int64_t, int64_t>, std::pair<core::NodeId, const IndexDistributionRule*>>
      set_by;
  for (const core::Node& n : graph.nodes()) {
    if (!isLookupOp(n)) continue;
    const core::TensorValue* weight = lookupArg(n, "weight", 0);
    const core::TensorValue* indices = lookupArg(n, "indices", 1);
    if (weight == nullptr || indices == nullptr || weight->shape.size() != 2) continue;
    const IndexDistributionRule* rule = nullptr;
    if (auto it = by_node.find(n.id); it != by_node.end()) rule = it->second;
    if (rule == nullptr) {
      auto it = by_shape.find({weight->shape[0], weight->shape[1]});
      if (it == by_shape.end()) it = by_shape.find({weight->shape[0], 0});
      if (it != by_shape.end()) rule = it->second;
    }
    if (rule == nullptr) continue;
    used.insert(rule);
    const auto key = std::make_pair(indices->tensor_id, indices->storage_id);
    if (auto it = set_by.find(key); it != set_by.end()) {  // a child of a lookup already matched
      const IndexDistributionRule& first = *it->second.second;
      // One tensor of indices, one law: an entry naming the inner lookup by
      // id and disagreeing lost silently. (A shape entry the inner lookup
      // also matches is not aimed at it: the outer's law holds.)
      if (rule->node == n.id && (first.zipf != rule->zipf || first.first_row != rule->first_row)) {
        throw InputError(fmt::format(
            "{}: node {} ('{}') reads the indices of node {} (the lookup it runs inside), "
            "whose law {} sets: the two entries disagree (zipf {} first_row {} against zipf {} "
            "first_row {}); give the outer lookup's only",
            rule->where, n.id, n.name, it->second.first, first.where, rule->zipf, rule->first_row,
            first.zipf, first.first_row));
      }
      continue;
    }
    set_by[key] = {n.id, rule};
    out.lookups[n.id] = core::IndexLaw{rule->zipf, rule->first_row};
    by_indices[key] = {rule->zipf, rule->first_row, weight->shape[0], indices->numel};
  }
  // The readers of the indices, then of the sparse gradients they make
  // (recorded without storage: core/sparse_layout.h), e.g. SGD's add_ of
  // the table's gradient, whose coalesce depends on the distinct rows.
  std::map<int64_t, ResolvedIndexDistributions::Reader> sparse_made;  // by tensor id
  for (const core::Node& n : graph.nodes()) {
    const ResolvedIndexDistributions::Reader* found = nullptr;
    for (const core::Value& v : n.inputs) {
      if (!v.isTensor()) continue;
      auto it = by_indices.find({v.tensor->tensor_id, v.tensor->storage_id});
      if (it != by_indices.end()) found = &it->second;
      if (found == nullptr && core::sparseCandidate(*v.tensor)) {
        auto s = sparse_made.find(v.tensor->tensor_id);
        if (s != sparse_made.end()) found = &s->second;
      }
    }
    if (found == nullptr) continue;
    out.readers[n.id] = *found;
    for (const core::Value& v : n.outputs) {
      if (v.isTensor() && core::sparseCandidate(*v.tensor)) sparse_made[v.tensor->tensor_id] = *found;
    }
  }
  for (const IndexDistributionRule& r : spec.tables) {
    if (r.node == core::kNoNode && !used.count(&r)) {
      out.unmatched.push_back(r.dim > 0 ? fmt::format("{}: {} x {}", r.where, r.rows, r.dim)
                                        : fmt::format("{}: {} rows", r.where, r.rows));
    }
  }
  return out;
}

std::unordered_map<core::NodeId, std::vector<double>> indexReuseOf(
    const ResolvedIndexDistributions& resolved) {
  std::map<std::tuple<int64_t, int64_t, double, int64_t>, std::vector<double>> cache;
  std::unordered_map<core::NodeId, std::vector<double>> out;
  for (const auto& [id, r] : resolved.readers) {
    if (r.exponent <= 0 || r.rows <= 0 || r.lookups <= 0) continue;
    auto key = std::make_tuple(r.lookups, r.rows, r.exponent, r.first_row);
    auto it = cache.find(key);
    if (it == cache.end()) {
      it = cache
               .emplace(key, zipfReuseHistogram(double(r.lookups), r.rows, r.exponent,
                                                r.first_row))
               .first;
    }
    out[id] = it->second;
  }
  return out;
}

}  // namespace tracetwin::predictors
