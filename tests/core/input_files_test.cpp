// core/input_files.h: an output never replaces a file the process read.
#include "core/input_files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/errors.h"
#include "core/text_file.h"
#include "core/trace_reader.h"
#include "tests/support/paths.h"
#include "tests/support/traces.h"

namespace tracetwin::core {
namespace {

using testing::TempDir;

TEST(InputFiles, AFileReadIsNotOverwrittenUnderAnyOfItsNames) {
  TempDir dir;
  const std::string spec = dir.write("spec.yaml", "name: x\n");
  const std::string other = dir.write("other.yaml", "name: y\n");
  EXPECT_NO_THROW(refuseOverwritingAnInput(spec, "the report"));  // not read yet
  noteInputFile(spec);                                            // as the trace readers do
  try {
    writeTextFile(spec, "{}");
    FAIL() << "the input was overwritten";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              spec +
                  ": is one of this command's inputs (this output would replace it); name "
                  "another file");
  }
  EXPECT_EQ(readTextFile(spec, "a device spec"), "name: x\n");
  const std::string link = dir.path() + "/link.yaml";
  std::filesystem::create_symlink(spec, link);
  EXPECT_THROW(writeTextFile(link, "{}"), InputError);
  EXPECT_THROW(writeTextFile(dir.path() + "/./spec.yaml", "{}"), InputError);
  // Other files, and new ones, are written as before.
  EXPECT_NO_THROW(writeTextFile(other, "{}"));
  EXPECT_NO_THROW(writeTextFile(dir.path() + "/new.json", "{}"));
}

TEST(InputFiles, TracesReadAreNotedAndTextInputsMayBeUpdated) {
  TempDir dir;
  const std::string trace = dir.path() + "/t.et.json.gz";
  std::filesystem::copy_file(testing::dataPath("mlp.et.json.gz"), trace);
  readTrace(trace);
  EXPECT_THROW(writeTextFile(trace, "{}"), InputError);
  // A model file read and rewritten (calibrate --refit, fit --out DIR).
  const std::string manifest = dir.write("manifest.json", "{}");
  readTextFile(manifest, "a model file");
  EXPECT_NO_THROW(writeTextFile(manifest, "{\"v\": 2}"));
}

}  // namespace
}  // namespace tracetwin::core
