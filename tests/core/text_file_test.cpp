// core/text_file.h: user-named text files, read or refused with their name.
#include "core/text_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "core/errors.h"
#include "tests/support/traces.h"

namespace tracetwin::core {
namespace {

using testing::TempDir;

std::string errorOf(const std::string& path, bool optional) {
  try {
    if (optional) {
      readTextFileIfPresent(path, "a device spec");
    } else {
      readTextFile(path, "a device spec");
    }
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(TextFile, ReadsWholeFiles) {
  TempDir dir;
  const std::string big(100000, 'x');  // several reads
  EXPECT_EQ(readTextFile(dir.write("a.yaml", big + "\n"), "a device spec"), big + "\n");
  EXPECT_EQ(readTextFile(dir.write("empty.yaml", ""), "a device spec"), "");
  EXPECT_EQ(readTextFileIfPresent(dir.path() + "/a.yaml", "a device spec"), big + "\n");
}

TEST(TextFile, DirectoriesAndMissingFilesAreInputErrorsNamingThePath) {
  // A directory used to reach users as "internal error: basic_filebuf::underflow".
  TempDir dir;
  EXPECT_EQ(errorOf(dir.path(), false), dir.path() + ": is a directory, not a device spec");
  EXPECT_EQ(errorOf(dir.path(), true), dir.path() + ": is a directory, not a device spec");
  const std::string missing = dir.path() + "/none.yaml";
  EXPECT_EQ(errorOf(missing, false),
            missing + ": cannot open a device spec: No such file or directory");
  // Optional files may be absent, but not behind a path that cannot exist.
  EXPECT_EQ(readTextFileIfPresent(missing, "a device spec"), std::nullopt);
  const std::string under_file = dir.write("f", "x") + "/spec.yaml";
  EXPECT_NE(errorOf(under_file, true).find("Not a directory"), std::string::npos);
}

// A gzipped YAML used to read as "YAML syntax error: unknown escape
// character" (a bad-input hunt).
TEST(TextFile, CompressedAndBinaryFilesAreNamedAsSuch) {
  TempDir dir;
  const std::string gz = dir.write("dev.yaml.gz", std::string("\x1f\x8b\x08\0rest", 8));
  EXPECT_EQ(errorOf(gz, false),
            gz + ": is gzip-compressed, not a device spec (give the uncompressed text: gunzip it)");
  const std::string bin = dir.write("dev.yaml", std::string("name: a\0b", 9));
  EXPECT_EQ(errorOf(bin, true), bin + ": byte 7: a NUL byte: a binary file, not a device spec");
}

// A full disk left half a JSON report behind; /dev/full itself must survive.
TEST(TextFile, AFailedWriteLeavesNoTruncatedFileAndSaysWhy) {
  struct stat st {};
  if (::stat("/dev/full", &st) != 0) GTEST_SKIP() << "no /dev/full";
  try {
    writeTextFile("/dev/full", std::string(1 << 16, 'x'));
    FAIL() << "a write to /dev/full succeeded";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "/dev/full: cannot write: No space left on device");
  }
  EXPECT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

}  // namespace
}  // namespace tracetwin::core
