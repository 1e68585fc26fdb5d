// InternedText: one copy per distinct text, string-like reads, and the
// reader's interned fields (types, devices, names, schemas) shared by value.
#include "core/interned_text.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "core/trace_reader.h"
#include "tests/support/paths.h"

namespace tracetwin::core {
namespace {

TEST(InternedText, EqualTextsShareOneCopy) {
  const std::string built = std::string("Tensor(") + "float)";
  const InternedText a = "Tensor(float)";
  const InternedText b = built;
  const InternedText c = std::string_view(built).substr(0, 6);
  EXPECT_EQ(&a.str(), &b.str());
  EXPECT_TRUE(a == b);
  EXPECT_NE(&a.str(), &c.str());
  EXPECT_EQ(c, "Tensor");
  EXPECT_EQ(InternedText().str(), "");
  EXPECT_EQ(&InternedText("").str(), &InternedText().str());
  EXPECT_TRUE(InternedText().empty());
}

TEST(InternedText, ReadsLikeAString) {
  InternedText t = "GenericList[";
  t += "Int";
  t += "]";
  EXPECT_EQ(t, "GenericList[Int]");
  EXPECT_EQ(t, std::string("GenericList[Int]"));
  EXPECT_EQ(std::string_view("GenericList[Int]"), t);
  EXPECT_NE(t, "GenericList[Int");
  EXPECT_EQ(t.size(), 16u);
  EXPECT_EQ(t.find('['), 11u);
  EXPECT_EQ(t.rfind("Int"), 12u);
  EXPECT_EQ(t.substr(0, 11), "GenericList");
  EXPECT_EQ(t + "!", "GenericList[Int]!");
  EXPECT_EQ('<' + t, "<GenericList[Int]");
  EXPECT_EQ(fmt::format("[{:>18}]", t), "[  GenericList[Int]]");
  const std::string& s = t;
  EXPECT_EQ(s, "GenericList[Int]");
}

TEST(InternedText, OrdersByTextNotByAddress) {
  // Interned in the reverse of their order: a map keyed by them must still
  // iterate alphabetically, as it did on std::string.
  std::map<InternedText, int> m;
  for (const char* name : {"zeta-9f1", "mid-9f1", "alpha-9f1"}) m[InternedText(name)] = 1;
  std::vector<std::string> order;
  for (const auto& [k, v] : m) order.push_back(k);
  EXPECT_EQ(order, (std::vector<std::string>{"alpha-9f1", "mid-9f1", "zeta-9f1"}));
}

TEST(InternedText, ThreadsGetTheSameCopy) {
  // Each thread has its own cache in front of the shared table.
  std::vector<const std::string*> seen(4, nullptr);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&seen, i] {
      for (int k = 0; k < 200; ++k) InternedText(fmt::format("thread-text-{}", k));
      seen[i] = &InternedText("thread-text-shared").str();
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string* p : seen) EXPECT_EQ(p, seen[0]);
}

TEST(InternedText, ReadNodesShareTypesDevicesAndSchemas) {
  const Graph g = readTrace(testing::dataPath("mlp.et.json.gz"));
  const std::string* float_type = nullptr;
  const std::string* schema = nullptr;
  size_t same_type = 0, same_schema = 0;
  for (const Node& n : g.nodes()) {
    if (n.name == "aten::t" && !n.op_schema_text.empty()) {
      if (schema == nullptr) schema = &n.op_schema_text.str();
      same_schema += &n.op_schema_text.str() == schema;
    }
    for (const Value& v : n.inputs) {
      if (v.type != "Tensor(float)") continue;
      if (float_type == nullptr) float_type = &v.type.str();
      same_type += &v.type.str() == float_type;
    }
  }
  EXPECT_GT(same_type, 10u);
  EXPECT_GT(same_schema, 5u);
}

}  // namespace
}  // namespace tracetwin::core
