// sweep/plan_traces.h: every plan's per-rank traces on disk, each plan in its
// own directory.
#include "sweep/plan_traces.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/errors.h"
#include "core/trace_reader.h"
#include "tests/support/traces.h"

namespace tracetwin::sweep {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

const SweepSpec& spec() {
  static const SweepSpec s = parseSweepSpec(R"(world_size: 2
batch_size: 8
tables:
  - {name: t0, rows: 100, dim: 4, pooling: 2}
  - {name: t1, rows: 100, dim: 4, pooling: 2, zipf: 1.1}
plans:
  - {name: p, assign: {t0: 0, t1: 1}}
)",
                                            "s.yaml");
  return s;
}

Plan plan(const std::string& name, std::vector<int> owner) {
  Plan p;
  p.name = name;
  p.owner = std::move(owner);
  return p;
}

std::string errorWriting(const std::vector<const Plan*>& plans, const std::string& dir) {
  try {
    writePlanTraces(spec(), plans, dir);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(PlanTraces, EachPlanHasItsDirectoryOfRankTracesThatRead) {
  TempDir dir;
  const Plan a = plan("split/even", {0, 1}), b = plan("all-on-0", {0, 0});
  writePlanTraces(spec(), {&a, &b}, dir.path());
  EXPECT_EQ(planDirectoryName("split/even"), "split_even");
  for (const char* name : {"split_even", "all-on-0"}) {
    for (int r = 0; r < 2; ++r) {
      const fs::path trace = fs::path(dir.path()) / name / fmt::format("rank{}.et.json", r);
      EXPECT_FALSE(core::readTrace(trace.string()).nodes().empty()) << trace;
    }
  }
}

TEST(PlanTraces, NamesThatCleanToOneDirectoryAreRefusedBeforeWriting) {
  // Found by a bad-input hunt: 'a/b' and 'a_b' both wrote to a_b/, and
  // --measure would have timed one plan twice.
  TempDir dir;
  const Plan a = plan("a/b", {0, 1}), b = plan("a_b", {0, 0});
  const std::string e = errorWriting({&a, &b}, dir.path() + "/out");
  EXPECT_NE(e.find("plans 'a/b' and 'a_b' would write to one directory"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(dir.path() + "/out"));
}

TEST(PlanTraces, ADirectoryThatCannotBeMadeIsAnInputError) {
  TempDir dir;
  const Plan a = plan("p", {0, 1});
  const std::string file = dir.write("afile", "x");
  const std::string e = errorWriting({&a}, file);
  EXPECT_NE(e.find(file + "/p: cannot make the directory"), std::string::npos) << e;
}

}  // namespace
}  // namespace tracetwin::sweep
