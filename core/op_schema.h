// Parsed operator schema strings such as
//   "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tracetwin::core {

struct SchemaArgument {
  std::string name;           // "self", "alpha"; may be empty for returns
  std::string type;           // "Tensor", "int[]", "Scalar", "ScalarType?" ...
  std::optional<std::string> default_value;  // "1", "None", "[]" ...
  bool kwarg_only = false;    // declared after '*'
  bool is_mutable = false;    // alias annotation with '!' e.g. Tensor(a!)
  std::string alias;          // "a" from Tensor(a!) / Tensor(a); empty if none
};

struct OpSchema {
  std::string ns;        // "aten"
  std::string name;      // "add"
  std::string overload;  // "Tensor"; empty for the default overload
  std::vector<SchemaArgument> arguments;
  std::vector<SchemaArgument> returns;
  bool is_vararg = false;

  std::string qualifiedName() const { return ns + "::" + name; }  // "aten::add"
};

// Parses a schema string; throws InputError (with the text and the column of
// the problem) when it is malformed. `context` names where the text came from
// (file and node id) for the message.
OpSchema parseOpSchema(const std::string& text, const std::string& context);

}  // namespace tracetwin::core
