#include "calibration/dataset.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "core/errors.h"
#include "core/op_family.h"
#include "core/text_file.h"
#include "core/trace_reader.h"

namespace tracetwin::calibration {
namespace {

// No microbenchmark call takes 1,000 s: a dataset time beyond it was edited
// in (1e300 was read and fitted). Model files bound op times the same way
// (predictors/kernels/analytic_models.cpp).
constexpr double kMaxMeasuredUs = 1e9;

bool measuredTime(const nlohmann::json& v) {
  return v.is_number() && v.get<double>() >= 0 && v.get<double>() <= kMaxMeasuredUs;
}

using nlohmann::json;

json valueJson(const core::Value& v) {
  switch (v.kind) {
    case core::ValueKind::kTensor: {
      const core::TensorValue& t = v.tensor;
      return json::array({t.tensor_id, t.storage_id, t.offset, t.numel, t.itemsize, t.device});
    }
    case core::ValueKind::kList:
    case core::ValueKind::kTuple: {
      json a = json::array();
      for (const core::Value& e : v.elements) a.push_back(valueJson(e));
      return a;
    }
    case core::ValueKind::kInt:
    case core::ValueKind::kScalarType:
    case core::ValueKind::kLayout:
    case core::ValueKind::kMemoryFormat:
      return v.int_value;
    case core::ValueKind::kDouble:
      // JSON has no inf/nan; the observer quotes them, and so do we.
      if (std::isnan(v.double_value)) return "nan";
      if (std::isinf(v.double_value)) return v.double_value > 0 ? "inf" : "-inf";
      return v.double_value;
    case core::ValueKind::kBool:
      return v.bool_value;
    case core::ValueKind::kNone:
      return "<None>";
    default:
      return v.string_value.str();
  }
}

json shapeJson(const core::Value& v) {
  if (v.kind == core::ValueKind::kTensor) return v.tensor->shape;
  json a = json::array();
  for (const core::Value& e : v.elements) a.push_back(shapeJson(e));
  return a;
}

void putValues(json& node, const std::vector<core::Value>& values, const char* key,
               const char* shapes_key, const char* types_key) {
  json vals = json::array(), shapes = json::array(), types = json::array();
  for (const core::Value& v : values) {
    vals.push_back(valueJson(v));
    shapes.push_back(shapeJson(v));
    types.push_back(v.type);
  }
  node[key] = std::move(vals);
  node[shapes_key] = std::move(shapes);
  node[types_key] = std::move(types);
}

// A legacy 1.0.1 label node with no arguments, under the root (id 1, its own parent).
json legacyLabelNode(const char* name, int64_t id, int64_t tid) {
  return {{"name", name},
          {"id", id},
          {"rf_id", 0},
          {"parent", 1},
          {"fw_parent", 0},
          {"seq_id", -1},
          {"scope", 0},
          {"tid", tid},
          {"fw_tid", 0},
          {"op_schema", ""},
          {"inputs", json::array()},
          {"input_shapes", json::array()},
          {"input_types", json::array()},
          {"outputs", json::array()},
          {"output_shapes", json::array()},
          {"output_types", json::array()}};
}

}  // namespace

json nodeToTraceJson(const core::Node& node) {
  json j;
  j["name"] = node.name;
  j["id"] = node.id;
  j["rf_id"] = node.rf_id;
  j["parent"] = node.parent;
  j["fw_parent"] = 0;
  j["seq_id"] = -1;
  j["scope"] = 0;
  j["tid"] = node.tid;
  j["fw_tid"] = 0;
  j["op_schema"] = node.op_schema_text;
  putValues(j, node.inputs, "inputs", "input_shapes", "input_types");
  putValues(j, node.outputs, "outputs", "output_shapes", "output_types");
  return j;
}

void writeDataset(const std::string& path, const std::vector<DatasetRow>& rows) {
  std::string out;
  for (const DatasetRow& r : rows) {
    json line;
    line["family"] = core::opFamily(r.sample.node);
    line["case"] = r.case_label;
    line["op"] = r.sample.node.name;
    line["measured_us"] = r.sample.measured_us;
    line["device"] = r.sample.device;
    line["index_reuse"] = r.sample.index_reuse;
    line["repeated"] = r.sample.repeated;
    if (r.host_slowdown > 0) line["host_slowdown"] = r.host_slowdown;
    if (r.idle_us > 0) line["idle_us"] = r.idle_us;
    if (r.previous_us > 0) line["previous_us"] = r.previous_us;
    if (r.repeats_us.size() >= 2) line["repeats_us"] = r.repeats_us;
    if (r.sample.reuse_bytes >= 0) line["reuse_bytes"] = r.sample.reuse_bytes;
    if (r.sample.spaced) line["spaced"] = true;
    if (r.host_us > 0) line["host_us"] = r.host_us;
    if (r.kernels >= 0) line["kernels"] = r.kernels;
    line["node"] = nodeToTraceJson(r.sample.node);
    out += line.dump();
    out += '\n';
  }
  core::updateModelFile(path, out);
}

std::vector<DatasetRow> readDataset(const std::string& path) {
  std::istringstream in(core::readTextFile(path, "a calibration dataset", core::InputUse::kModel));
  std::vector<DatasetRow> rows;
  // All nodes go into one synthetic 1.0.1 trace under one thread node, with
  // fresh ids, and come back typed through core's trace parser.
  json nodes = json::array();
  std::string line;
  int64_t line_no = 0;
  constexpr int64_t kFirstId = 3;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || !j.contains("node") || !j.contains("measured_us") ||
        !j["measured_us"].is_number()) {
      throw InputError(
          fmt::format("{}:{}: expected a JSON object with \"node\" and numeric \"measured_us\"",
                      path, line_no));
    }
    if (!measuredTime(j["measured_us"]) || !j["node"].is_object()) {
      throw InputError(
          fmt::format("{}:{}: expected a non-negative \"measured_us\" of at most {:g} us and "
                      "\"node\" an object",
                      path, line_no, kMaxMeasuredUs));
    }
    DatasetRow row;
    // The optional fields' types: a wrong one was nlohmann's type_error,
    // reported as an internal error without the line (a bad-input hunt).
    try {
      row.case_label = j.value("case", "");
      row.sample.measured_us = j["measured_us"].get<double>();
      row.sample.device = j.value("device", "");
      // Datasets written before interleaving held repeated cases only.
      row.sample.repeated = j.value("repeated", true);
      if (j.contains("host_slowdown") && j["host_slowdown"].is_number())
        row.host_slowdown = j["host_slowdown"].get<double>();
      if (j.contains("idle_us") && j["idle_us"].is_number())
        row.idle_us = j["idle_us"].get<double>();
      if (j.contains("previous_us") && j["previous_us"].is_number())
        row.previous_us = j["previous_us"].get<double>();
      if (j.contains("repeats_us")) {
        const json& rep = j["repeats_us"];
        const bool numbers =
            rep.is_array() &&
            std::all_of(rep.begin(), rep.end(), [](const json& x) { return measuredTime(x); });
        if (!numbers) {
          throw InputError(
              fmt::format("{}:{}: \"repeats_us\" must be an array of times from 0 to {:g} us", path,
                          line_no, kMaxMeasuredUs));
        }
        row.repeats_us = rep.get<std::vector<double>>();
      }
      // A GPU row's kernel count; its host time goes with one. Rows pooled
      // from another host keep the count without the host time
      // (scripts/gpu-session.sh, pool_prior): the count is the GPU's.
      if (j.contains("kernels")) {
        if (!j["kernels"].is_number_integer() || j["kernels"].get<int64_t>() < 0 ||
            j["kernels"].get<int64_t>() > (1 << 20)) {
          throw InputError(fmt::format(
              "{}:{}: \"kernels\" must be a count of 0 or more (the kernels beside \"host_us\")",
              path, line_no));
        }
        row.kernels = static_cast<int>(j["kernels"].get<int64_t>());
      }
      if (j.contains("host_us")) {
        if (!measuredTime(j["host_us"]) || !(j["host_us"].get<double>() > 0) ||
            !j.contains("kernels")) {
          throw InputError(fmt::format(
              "{}:{}: \"host_us\" must be a positive time of at most {:g} us, with \"kernels\" a "
              "count of 0 or more",
              path, line_no, kMaxMeasuredUs));
        }
        row.host_us = j["host_us"].get<double>();
      }
      if (j.contains("reuse_bytes")) {
        if (!j["reuse_bytes"].is_number() || !(j["reuse_bytes"].get<double>() >= 0)) {
          throw InputError(
              fmt::format("{}:{}: \"reuse_bytes\" must be a number of 0 or more", path, line_no));
        }
        row.sample.reuse_bytes = j["reuse_bytes"].get<double>();
      }
      if (j.contains("spaced")) {
        if (!j["spaced"].is_boolean())
          throw InputError(fmt::format("{}:{}: \"spaced\" must be true or false", path, line_no));
        row.sample.spaced = j["spaced"].get<bool>();
      }
      if (j.contains("index_reuse") && j["index_reuse"].is_array()) {
        row.sample.index_reuse = j["index_reuse"].get<std::vector<double>>();
      }
    } catch (const json::exception& e) {
      throw InputError(
          fmt::format("{}:{}: a field of the wrong type: {}", path, line_no, e.what()));
    }
    json node = j["node"];
    node["id"] = kFirstId + static_cast<int64_t>(rows.size());
    node["parent"] = 2;
    nodes.push_back(std::move(node));
    rows.push_back(std::move(row));
  }
  nodes.push_back(
      legacyLabelNode("[pytorch|profiler|execution_graph|thread]", /*id=*/2, /*tid=*/1));
  nodes.push_back(
      legacyLabelNode("[pytorch|profiler|execution_graph|process]", /*id=*/1, /*tid=*/0));
  json doc = {{"schema", "1.0.1"}, {"pid", 0},       {"time", ""},
              {"start_ts", 0},     {"nodes", nodes}, {"finish_ts", 0}};
  const core::Graph g = core::parseTrace(doc.dump(), path);
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].sample.node = g.node(kFirstId + static_cast<core::NodeId>(i));
  }
  return rows;
}

std::vector<std::pair<const DatasetRow*, const DatasetRow*>> pairByPoint(
    const std::vector<DatasetRow>& rows, const PointOf& measured, const PointOf& reference) {
  std::map<std::pair<std::string, std::string>, const DatasetRow*> references;
  for (const DatasetRow& r : rows) {
    if (std::optional<std::string> point = reference(r))
      references[{*point, r.sample.node.name}] = &r;
  }
  std::vector<std::pair<const DatasetRow*, const DatasetRow*>> pairs;
  for (const DatasetRow& r : rows) {
    const std::optional<std::string> point = measured(r);
    if (!point) continue;
    auto it = references.find({*point, r.sample.node.name});
    if (it != references.end()) pairs.emplace_back(&r, it->second);
  }
  return pairs;
}

}  // namespace tracetwin::calibration
