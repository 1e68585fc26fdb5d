// The schema-string parser on the shapes of schemas that real traces carry.
#include "core/op_schema.h"

#include <gtest/gtest.h>

#include "core/errors.h"

namespace tracetwin::core {
namespace {

TEST(OpSchema, NamespaceNameOverloadArgsDefaultsKwargs) {
  const OpSchema s = parseOpSchema(
      "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", "t");
  EXPECT_EQ(s.ns, "aten");
  EXPECT_EQ(s.name, "add");
  EXPECT_EQ(s.overload, "Tensor");
  EXPECT_EQ(s.qualifiedName(), "aten::add");
  ASSERT_EQ(s.arguments.size(), 3u);
  EXPECT_EQ(s.arguments[0].name, "self");
  EXPECT_EQ(s.arguments[0].type, "Tensor");
  EXPECT_FALSE(s.arguments[1].kwarg_only);
  EXPECT_TRUE(s.arguments[2].kwarg_only);
  EXPECT_EQ(s.arguments[2].type, "Scalar");
  EXPECT_EQ(s.arguments[2].default_value, "1");
  ASSERT_EQ(s.returns.size(), 1u);
  EXPECT_EQ(s.returns[0].type, "Tensor");
  EXPECT_TRUE(s.returns[0].name.empty());
}

TEST(OpSchema, DefaultOverloadAndAliasAnnotations) {
  const OpSchema s = parseOpSchema(
      "aten::as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? "
      "storage_offset=None) -> Tensor(a)",
      "t");
  EXPECT_EQ(s.overload, "");
  EXPECT_EQ(s.arguments[0].alias, "a");
  EXPECT_FALSE(s.arguments[0].is_mutable);
  EXPECT_EQ(s.arguments[1].type, "SymInt[]");
  EXPECT_EQ(s.arguments[3].type, "SymInt?");
  EXPECT_EQ(s.arguments[3].default_value, "None");
  EXPECT_EQ(s.returns[0].alias, "a");
  const OpSchema m =
      parseOpSchema("aten::mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)", "t");
  EXPECT_TRUE(m.arguments[2].is_mutable);
  EXPECT_TRUE(m.arguments[2].kwarg_only);
  EXPECT_EQ(m.arguments[2].type, "Tensor");
  EXPECT_TRUE(m.returns[0].is_mutable);
}

TEST(OpSchema, TupleReturnsListDefaultsAndQuotedStrings) {
  const OpSchema s = parseOpSchema(
      "aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], "
      "int[2] padding=0, bool ceil_mode=False) -> (Tensor, Tensor)",
      "t");
  ASSERT_EQ(s.arguments.size(), 5u);
  EXPECT_EQ(s.arguments[2].default_value, "[]");
  EXPECT_EQ(s.returns.size(), 2u);
  const OpSchema q = parseOpSchema(
      "aten::foo(Tensor self, str reduce=\"mean, sum\", Tensor(a!)[] outs) -> (Tensor(a!) values, "
      "Tensor indices)",
      "t");
  ASSERT_EQ(q.arguments.size(), 3u);
  EXPECT_EQ(q.arguments[1].default_value, "\"mean, sum\"");
  EXPECT_EQ(q.arguments[2].type, "Tensor[]");
  EXPECT_TRUE(q.arguments[2].is_mutable);
  EXPECT_EQ(q.returns[0].name, "values");
  EXPECT_EQ(q.returns[1].name, "indices");
  const OpSchema none = parseOpSchema(
      "aten::_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()", "t");
  EXPECT_TRUE(none.returns.empty());
  const OpSchema va = parseOpSchema("prim::Print(...) -> ()", "t");
  EXPECT_TRUE(va.is_vararg);
  const OpSchema wildcard = parseOpSchema(
      "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]", "t");
  EXPECT_EQ(wildcard.arguments[0].alias, "a");
  EXPECT_EQ(wildcard.returns[0].type, "Tensor[]");
  const OpSchema dict = parseOpSchema("foo::bar(Dict(str, Tensor) d) -> Tensor", "t");
  EXPECT_EQ(dict.arguments[0].type, "Dict(str, Tensor)");
  EXPECT_EQ(dict.arguments[0].name, "d");
}

TEST(OpSchema, MalformedSchemasNameTextAndColumn) {
  for (const char* bad :
       {"aten::add", "aten::add(Tensor self", "(Tensor self) -> Tensor",
        "aten::add(Tensor self) Tensor", "aten::f(str x=\"unterminated) -> Tensor",
        "aten::f(Tensor a,, Tensor b) -> Tensor", "aten::f(Tensor a) ->"}) {
    try {
      parseOpSchema(bad, "file.json: node 7");
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const InputError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("file.json: node 7"), std::string::npos) << msg;
      EXPECT_NE(msg.find("column"), std::string::npos) << msg;
    }
  }
}

}  // namespace
}  // namespace tracetwin::core
