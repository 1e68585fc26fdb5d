#include "tests/support/traces.h"

#include <fmt/core.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace tracetwin::testing {

std::string modernNode(long id, long parent, const std::string& name, const std::string& schema,
                       const std::string& values, const std::string& shapes,
                       const std::string& types, const std::string& extra_attrs) {
  return fmt::format(
      R"({{"id": {}, "name": "{}", "ctrl_deps": {},
  "inputs": {{"values": {}, "shapes": {}, "types": {}}},
  "outputs": {{"values": [], "shapes": [], "types": []}},
  "attrs": [{{"name": "rf_id", "type": "uint64", "value": {}}}, {{"name": "op_schema", "type": "string", "value": "{}"}}{}]}})",
      id, name, parent, values, shapes, types, id, schema, extra_attrs);
}

std::string modernTrace(const std::string& nodes, const std::string& schema) {
  return fmt::format(
      R"({{"schema": "{}", "pid": 7, "time": "2024-01-01 00:00:00", "start_ts": 10,
"nodes": [{}{}
{{"id": 2, "name": "[pytorch|profiler|execution_trace|thread]", "ctrl_deps": 1, "inputs": {{"values": [], "shapes": [], "types": []}}, "outputs": {{"values": [], "shapes": [], "types": []}}, "attrs": []}},
{{"id": 1, "name": "[pytorch|profiler|execution_trace|process]", "ctrl_deps": 1, "inputs": {{"values": [], "shapes": [], "types": []}}, "outputs": {{"values": [], "shapes": [], "types": []}}, "attrs": []}}],
"finish_ts": 20}})",
      schema, nodes, nodes.empty() ? "" : ",");
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "tracetwin_test_XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed: " + tmpl);
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::write(const std::string& name, const std::string& bytes) const {
  const std::string p = path_ + "/" + name;
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

}  // namespace tracetwin::testing
