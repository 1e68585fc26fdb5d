// cli/temp_directory.h: a private directory, removed when the command ends
// well, kept (and said) when it ends by an exception.
#include "cli/temp_directory.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "core/errors.h"

namespace tracetwin::cli {
namespace {

namespace fs = std::filesystem;

TEST(TempDirectory, RemovedAtTheEndKeptWhenTheCommandFails) {
  std::string made;
  {
    const TempDirectory dir("tracetwin-test");
    made = dir.path();
    EXPECT_TRUE(fs::is_directory(made));
    EXPECT_NE(fs::path(made).filename().string().rfind("tracetwin-test-", 0), std::string::npos);
    std::ofstream(made + "/file") << "x";
  }
  EXPECT_FALSE(fs::exists(made));
  try {
    const TempDirectory dir("tracetwin-test");
    made = dir.path();
    throw std::runtime_error("the command failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_TRUE(fs::is_directory(made)) << "kept for the user to read";
  fs::remove_all(made);
}

TEST(TempDirectory, ATmpdirThatIsNoDirectoryIsNamed) {
  const char* old = std::getenv("TMPDIR");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("TMPDIR", "/nonexistent-tracetwin-tmp", 1);
  try {
    const TempDirectory dir("tracetwin-test");
    FAIL() << "made " << dir.path();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-tracetwin-tmp"), std::string::npos)
        << e.what();
  }
  if (old != nullptr) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
}

}  // namespace
}  // namespace tracetwin::cli
