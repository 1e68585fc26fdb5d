// Small hand-written execution traces for reader and CLI tests: a root, one
// thread and the nodes given, in the modern (1.0.2+) layout, and a temporary
// directory to write them to.
#pragma once

#include <string>

namespace tracetwin::testing {

// One modern node: id, parent, name, op_schema, inputs (values/shapes/types).
std::string modernNode(long id, long parent, const std::string& name, const std::string& schema,
                       const std::string& values = "[]", const std::string& shapes = "[]",
                       const std::string& types = "[]", const std::string& extra_attrs = "");

std::string modernTrace(const std::string& nodes, const std::string& schema = "1.1.0-chakra.0.0.4");

// A temporary directory removed with its contents at the end of the test.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes `bytes` to path()/name and returns that path.
  std::string write(const std::string& name, const std::string& bytes) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tracetwin::testing
