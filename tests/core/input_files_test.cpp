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

TEST(InputFiles, TracesAndTextInputsAreNotedAndModelFilesMayBeUpdated) {
  TempDir dir;
  const std::string trace = dir.path() + "/t.et.json.gz";
  std::filesystem::copy_file(testing::dataPath("mlp.et.json.gz"), trace);
  readTrace(trace);
  EXPECT_THROW(writeTextFile(trace, "{}"), InputError);
  EXPECT_THROW(updateModelFile(trace, "{}"), InputError);
  // `sweep s.yaml --csv s.yaml` replaced the sweep file with its report.
  const std::string sweep = dir.write("s.yaml", "world_size: 2\n");
  readTextFile(sweep, "a sweep file");
  EXPECT_THROW(writeTextFile(sweep, "rank_order,plan\n"), InputError);
  EXPECT_THROW(updateModelFile(sweep, "{}"), InputError);
  // A model file read: no report replaces it (`sweep --json-out
  // models/manifest.json`), its own writer does (calibrate --refit, fit --out).
  const std::string manifest = dir.write("manifest.json", "{}");
  readTextFile(manifest, "a model file", InputUse::kModel);
  EXPECT_THROW(writeTextFile(manifest, "{}"), InputError);
  EXPECT_NO_THROW(updateModelFile(manifest, "{\"v\": 2}"));
  EXPECT_EQ(readTextFile(manifest, "a model file", InputUse::kModel), "{\"v\": 2}");
  // Read both ways: read-only.
  const std::string spec = dir.write("device.yaml", "name: x\n");
  readTextFile(spec, "a device spec", InputUse::kModel);
  readTextFile(spec, "a device spec");
  EXPECT_THROW(updateModelFile(spec, "name: y\n"), InputError);
}

}  // namespace
}  // namespace tracetwin::core
