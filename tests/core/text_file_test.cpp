// core/text_file.h: user-named text files, read or refused with their name.
#include "core/text_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
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
  EXPECT_EQ(errorOf("/dev/zero", false), "/dev/zero: is a character device, not a device spec");
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

// A regular file is replaced whole (written beside it, then renamed), so a
// full disk cannot leave half of it; its mode and a symlink to it survive.
TEST(TextFile, ReplacingAFileKeepsItsModeAndSymlinksAndLeavesNothingBeside) {
  TempDir dir;
  const std::string file = dir.write("models.json", "old");
  ASSERT_EQ(::chmod(file.c_str(), 0640), 0);
  const std::string link = dir.path() + "/link.json";
  std::filesystem::create_symlink(file, link);
  writeTextFile(link, "new through the link");
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  writeTextFile(file, "new");
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 2) << "a temporary file was left beside the output";
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "new");
}

}  // namespace
}  // namespace tracetwin::core
