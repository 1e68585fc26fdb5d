// --op-library: an operator the trace recorded but this LibTorch lacks is
// skipped with the hint, and replays once the library registering it is
// loaded (the fbgemm ops of ../shared/traces/dlrm_8rank need fbgemm_gpu's).
#include "replay/op_libraries.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/errors.h"
#include "replay/replayer.h"
#include "tests/support/graphs.h"
#include "tests/support/paths.h"
#include "tests/support/values.h"

namespace tracetwin::replay {
namespace {

using testing::doubleValue;
using testing::GraphBuilder;
using testing::tensorValue;

// Built beside the binary by tests/replay/CMakeLists.txt.
std::string testOpLibrary() {
  return (std::filesystem::path(testing::tracetwinBinary()).parent_path() /
          "libtracetwin_test_ops.so")
      .string();
}

core::Graph scaleGraph() {
  GraphBuilder b;
  b.op("tracetwin_test::scale_by(Tensor x, float factor) -> Tensor",
       {tensorValue(1, 1, {16}), doubleValue(2.0)}, {tensorValue(2, 2, {16})});
  return b.build();
}

ReplayOptions once() {
  ReplayOptions o;
  o.warmup_iters = 0;
  o.measured_iters = 1;
  return o;
}

TEST(OpLibrary, AnOpThisLibTorchLacksIsSkippedWithTheHint) {
  // A library stays loaded for the process: this test means something only before the next.
  if (c10::Dispatcher::singleton().findOp({"tracetwin_test::scale_by", ""})) {
    GTEST_SKIP() << "the test library is already loaded in this process";
  }
  const ReplayResult r = replayGraph(scaleGraph(), once());
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_NE(r.skipped[0].reason.find("--op-library"), std::string::npos) << r.skipped[0].reason;
}

TEST(OpLibrary, ItsLibraryLoadedTheOpReplays) {
  ReplayOptions o = once();
  o.op_libraries = {testOpLibrary()};
  const ReplayResult r = replayGraph(scaleGraph(), o);
  EXPECT_TRUE(r.skipped.empty());
  EXPECT_TRUE(r.failed.empty());
  EXPECT_EQ(r.replayed_ops, 1);
}

TEST(OpLibrary, AMissingOrUnloadableFileIsAnInputError) {
  EXPECT_THROW(loadOpLibraries({"/nonexistent/libops.so"}), InputError);
  // A file that is not a shared object: the loader's reason is in the message.
  try {
    loadOpLibraries({testing::sourcePath("README.md")});
    FAIL() << "loaded README.md";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("README.md"), std::string::npos);
  }
}

}  // namespace
}  // namespace tracetwin::replay
