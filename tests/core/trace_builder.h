// Small hand-written execution traces for reader tests: a root, one thread and
// the nodes given, in the modern (1.0.2+) or legacy (1.0.1) layout.
#pragma once

#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace tracetwin::testing {

// One modern node: id, parent, name, op_schema, inputs (values/shapes/types).
inline std::string modernNode(long id, long parent, const std::string& name,
                              const std::string& schema, const std::string& values = "[]",
                              const std::string& shapes = "[]", const std::string& types = "[]",
                              const std::string& extra_attrs = "") {
  return fmt::format(
      R"({{"id": {}, "name": "{}", "ctrl_deps": {},
  "inputs": {{"values": {}, "shapes": {}, "types": {}}},
  "outputs": {{"values": [], "shapes": [], "types": []}},
  "attrs": [{{"name": "rf_id", "type": "uint64", "value": {}}}, {{"name": "op_schema", "type": "string", "value": "{}"}}{}]}})",
      id, name, parent, values, shapes, types, id, schema, extra_attrs);
}

inline std::string modernTrace(const std::string& nodes,
                               const std::string& schema = "1.1.0-chakra.0.0.4") {
  return fmt::format(
      R"({{"schema": "{}", "pid": 7, "time": "2024-01-01 00:00:00", "start_ts": 10,
"nodes": [{}{}
{{"id": 2, "name": "[pytorch|profiler|execution_trace|thread]", "ctrl_deps": 1, "inputs": {{"values": [], "shapes": [], "types": []}}, "outputs": {{"values": [], "shapes": [], "types": []}}, "attrs": []}},
{{"id": 1, "name": "[pytorch|profiler|execution_trace|process]", "ctrl_deps": 1, "inputs": {{"values": [], "shapes": [], "types": []}}, "outputs": {{"values": [], "shapes": [], "types": []}}, "attrs": []}}],
"finish_ts": 20}})",
      schema, nodes, nodes.empty() ? "" : ",");
}

// A temporary directory removed with its contents at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tracetwin_test_XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string write(const std::string& name, const std::string& bytes) const {
    const std::string p = path_ + "/" + name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tracetwin::testing
