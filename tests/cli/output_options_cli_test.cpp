// Options that were accepted and then ignored, or found wrong only after the
// work was done (a bad-input hunt): refused when the command line is read.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/paths.h"
#include "tests/support/run.h"
#include "tests/support/traces.h"

namespace tracetwin {
namespace {

using testing::CommandRun;

const std::string kOutMlp = testing::dataPath("mlp.et.json.gz");
const std::string kOutModels = testing::sourcePath("data/models/host");

void expectUsageError(const std::string& args, const std::string& says) {
  const CommandRun r = testing::runTracetwin(args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output();
  EXPECT_NE(r.output().find(says), std::string::npos) << args << "\n" << r.output();
}

TEST(OutputOptionsCli, AFileInAMissingDirectoryIsRefusedBeforeAnyWork) {
  // replay wrote its report only after the whole replay had run.
  expectUsageError("replay " + kOutMlp + " --iters 1 --json-out /nonexistent/r.json",
                   "its directory /nonexistent does not exist");
  expectUsageError(
      "predict " + kOutMlp + " --models " + kOutModels + " --timeline /nonexistent/t.json",
      "its directory /nonexistent does not exist");
  testing::TempDir dir;
  expectUsageError("predict " + kOutMlp + " --models " + kOutModels + " --json-out " + dir.path(),
                   "is a directory, not a file");
  // --rank-reports was found to be a file only after the whole replay.
  expectUsageError("replay " + kOutMlp + " --nproc 2 --rank-reports " + kOutMlp,
                   "is a file, not a directory");
}

// `predict ... > pred.txt` on a full file system printed nothing and exited 0.
TEST(OutputOptionsCli, AReportLostToAFullDiskIsAFailure) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  CommandRun r = testing::runCommand("( " + testing::tracetwinBinary() + " predict " + kOutMlp +
                                     " --models " + kOutModels + " >/dev/full )");
  EXPECT_EQ(r.exit_code, 4) << r.output();
  EXPECT_NE(r.err.find("writing the standard output: No space left on device"), std::string::npos)
      << r.output();
  r = testing::runCommand("( " + testing::tracetwinBinary() + " inspect " + kOutMlp + " >&- )");
  EXPECT_EQ(r.exit_code, 4) << r.output();
  // A report longer than stdio's buffer fails inside fmt::print (it threw
  // std::system_error: "internal error", exit 1).
  r = testing::runCommand("( " + testing::tracetwinBinary() + " link " +
                          testing::sharedTrace("linear_1.0.1_et.json.gz") + " " +
                          testing::sharedTrace("linear_kineto.json.gz") + " --ops >/dev/full )");
  EXPECT_EQ(r.exit_code, 4) << r.output();
  EXPECT_NE(r.err.find("tracetwin: failed: writing the standard output"), std::string::npos)
      << r.output();
}

// --help and --version to a full disk printed nothing and exited 0.
TEST(OutputOptionsCli, HelpLostToAFullDiskIsAFailure) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  for (const std::string args : {"--help", "--version", "predict --help"}) {
    const CommandRun r =
        testing::runCommand("( " + testing::tracetwinBinary() + " " + args + " >/dev/full )");
    EXPECT_EQ(r.exit_code, 4) << args << ": " << r.output();
    EXPECT_NE(r.err.find("writing the standard output"), std::string::npos) << r.output();
  }
}

// An error with stderr closed or full (`2>&-` under cron) aborted with SIGABRT:
// printing it threw inside main's catch handler. It keeps its exit code.
TEST(OutputOptionsCli, ErrorsKeepTheirExitCodeWithStderrClosedOrFull) {
  for (const std::string redirect : {"2>&-", "2>/dev/full"}) {
    const CommandRun r = testing::runCommand("( " + testing::tracetwinBinary() +
                                             " inspect /nonexistent/t.et.json " + redirect + " )");
    EXPECT_EQ(r.exit_code, 2) << redirect << ": " << r.output();
  }
}

// `predict t.et.json.gz --json-out t.et.json.gz` replaced the user's trace
// with its report (core/input_files.h).
TEST(OutputOptionsCli, AnOutputNamingAnInputIsRefusedAndTheInputKept) {
  testing::TempDir dir;
  const std::string trace = dir.path() + "/t.et.json.gz";
  std::filesystem::copy_file(kOutMlp, trace);
  const auto size = std::filesystem::file_size(trace);
  for (const std::string option : {"--json-out", "--timeline"}) {
    const CommandRun r = testing::runTracetwin("predict " + trace + " --models " + kOutModels +
                                               " " + option + " " + trace);
    EXPECT_EQ(r.exit_code, 2) << r.output();
    EXPECT_NE(r.output().find("is one of this command's inputs"), std::string::npos) << r.output();
  }
  EXPECT_EQ(testing::runTracetwin("export --chakra " + trace + " " + trace).exit_code, 2);
  EXPECT_EQ(std::filesystem::file_size(trace), size);
  EXPECT_EQ(testing::runTracetwin("inspect " + trace).exit_code, 0);
}

// An empty first ProfilerStep (ops only in later steps) predicted "0.000 ms
// (0 ops)" without a word (a bad-input hunt): a note says where the ops are.
TEST(OutputOptionsCli, AnEmptyIterationWindowIsNoted) {
  testing::TempDir dir;
  const std::string trace = dir.path() + "/empty_step.et.json";
  std::ofstream(trace)
      << R"TRACE({"schema":"1.1.0-chakra.0.0.4","pid":1,"time":"t","start_ts":0,"finish_ts":1,"nodes":[{"id":10,"name":"ProfilerStep#1","ctrl_deps":2,"inputs":{"values":[],"shapes":[],"types":[]},"outputs":{"values":[],"shapes":[],"types":[]},"attrs":[{"name":"rf_id","type":"uint64","value":0},{"name":"tid","type":"uint64","value":1},{"name":"op_schema","type":"string","value":""}]},{"id":21,"name":"aten::mm","ctrl_deps":20,"inputs":{"values":[[100,200,0,2048,4,"cpu"],[101,201,0,512,4,"cpu"]],"shapes":[[64,32],[32,16]],"types":["Tensor(float)","Tensor(float)"]},"outputs":{"values":[[102,202,0,1024,4,"cpu"]],"shapes":[[64,16]],"types":["Tensor(float)"]},"attrs":[{"name":"rf_id","type":"uint64","value":1},{"name":"tid","type":"uint64","value":1},{"name":"op_schema","type":"string","value":"aten::mm(Tensor self, Tensor mat2) -> Tensor"}]},{"id":22,"name":"aten::mm","ctrl_deps":20,"inputs":{"values":[[100,200,0,2048,4,"cpu"],[101,201,0,512,4,"cpu"]],"shapes":[[64,32],[32,16]],"types":["Tensor(float)","Tensor(float)"]},"outputs":{"values":[[102,202,0,1024,4,"cpu"]],"shapes":[[64,16]],"types":["Tensor(float)"]},"attrs":[{"name":"rf_id","type":"uint64","value":2},{"name":"tid","type":"uint64","value":1},{"name":"op_schema","type":"string","value":"aten::mm(Tensor self, Tensor mat2) -> Tensor"}]},{"id":20,"name":"ProfilerStep#2","ctrl_deps":2,"inputs":{"values":[],"shapes":[],"types":[]},"outputs":{"values":[],"shapes":[],"types":[]},"attrs":[{"name":"rf_id","type":"uint64","value":0},{"name":"tid","type":"uint64","value":1},{"name":"op_schema","type":"string","value":""}]},{"id":31,"name":"aten::mm","ctrl_deps":30,"inputs":{"values":[[100,200,0,2048,4,"cpu"],[101,201,0,512,4,"cpu"]],"shapes":[[64,32],[32,16]],"types":["Tensor(float)","Tensor(float)"]},"outputs":{"values":[[102,202,0,1024,4,"cpu"]],"shapes":[[64,16]],"types":["Tensor(float)"]},"attrs":[{"name":"rf_id","type":"uint64","value":3},{"name":"tid","type":"uint64","value":1},{"name":"op_schema","type":"string","value":"aten::mm(Tensor self, Tensor mat2) -> Tensor"}]},{"id":32,"name":"aten::mm","ctrl_deps":30,"inputs":{"values":[[100,200,0,2048,4,"cpu"],[101,201,0,512,4,"cpu"]],"shapes":[[64,32],[32,16]],"types":["Tensor(float)","Tensor(float)"]},"outputs":{"values":[[102,202,0,1024,4,"cpu"]],"shapes":[[64,16]],"types":["Tensor(float)"]},"attrs":[{"name":"rf_id","type":"uint64","value":4},{"name":"tid","type":"uint64","value":1},{"name":"op_schema","type":"string","value":"aten::mm(Tensor self, Tensor mat2) -> Tensor"}]},{"id":30,"name":"ProfilerStep#3","ctrl_deps":2,"inputs":{"values":[],"shapes":[],"types":[]},"outputs":{"values":[],"shapes":[],"types":[]},"attrs":[{"name":"rf_id","type":"uint64","value":0},{"name":"tid","type":"uint64","value":1},{"name":"op_schema","type":"string","value":""}]},{"id":2,"name":"[pytorch|profiler|execution_trace|thread]","ctrl_deps":1,"inputs":{"values":[],"shapes":[],"types":[]},"outputs":{"values":[],"shapes":[],"types":[]},"attrs":[{"name":"rf_id","type":"uint64","value":0},{"name":"tid","type":"uint64","value":1},{"name":"op_schema","type":"string","value":""}]},{"id":1,"name":"[pytorch|profiler|execution_trace|process]","ctrl_deps":1,"inputs":{"values":[],"shapes":[],"types":[]},"outputs":{"values":[],"shapes":[],"types":[]},"attrs":[{"name":"rf_id","type":"uint64","value":0},{"name":"tid","type":"uint64","value":1},{"name":"op_schema","type":"string","value":""}]}]})TRACE";
  const CommandRun r = testing::runTracetwin("predict " + trace + " --models " + kOutModels);
  EXPECT_EQ(r.exit_code, 0) << r.output();
  EXPECT_NE(r.output().find("holds no ops; the trace's 4 operator nodes lie outside it"),
            std::string::npos)
      << r.output();
}

TEST(OutputOptionsCli, TwoOutputsCannotBeOneFile) {
  testing::TempDir dir;
  const std::string out = dir.path() + "/out.json";
  expectUsageError("predict " + kOutMlp + " --models " + kOutModels + " --json-out " + out +
                       " --timeline " + dir.path() + "/../" +
                       std::filesystem::path(dir.path()).filename().string() + "/out.json",
                   "--json-out and --timeline name one file");
  EXPECT_FALSE(std::filesystem::exists(out));
  // Through a symlinked directory: one file still.
  std::filesystem::create_directory_symlink(dir.path(), dir.path() + "/alias");
  expectUsageError("predict " + kOutMlp + " --models " + kOutModels + " --json-out " + out +
                       " --timeline " + dir.path() + "/alias/out.json",
                   "--json-out and --timeline name one file");
}

TEST(OutputOptionsCli, OptionsThatWereIgnoredSayWhatTheyNeed) {
  testing::TempDir dir;
  expectUsageError("replay " + kOutMlp + " --iters 1 --rank-reports " + dir.path(),
                   "needs --nproc N");
  expectUsageError("replay " + kOutMlp + " --nproc 5000",
                   "--nproc: 5000: expected a whole number from 1 to 1024");
  expectUsageError("replay " + kOutMlp + " --seed -1", "--seed");  // unsigned: it wrapped
  expectUsageError("replay " + kOutMlp + " --no-cupti", "--no-cupti applies to a CUDA replay");
  expectUsageError("replay " + kOutMlp + " --host-time recorded --overheads " + kOutMlp,
                   "--overheads applies with --host-time model");
  expectUsageError("export --chakra " + dir.path() + "/x.et " + kOutMlp + " --models " + kOutModels,
                   "--models is read by --from prediction only");
  expectUsageError("export --chakra " + dir.path() + "/x.et " + kOutMlp + " --from ''", "--from");
  // A bad-input hunt's: each of these ran and ignored the option.
  expectUsageError("export --chakra " + dir.path() + "/x.et " + kOutMlp +
                       " --from prediction --models " + kOutModels + " --device cuda",
                   "--device is read by --from replay only (durations from prediction)");
  expectUsageError("export --chakra " + dir.path() + "/x.et " + kOutMlp + " --iters 5",
                   "--iters is read by --from replay only");
  expectUsageError("predict " + kOutMlp + " --models " + kOutModels + " --comm-link bogus",
                   "has no link 'bogus'");
  expectUsageError("compare " + kOutMlp + " --models " + kOutModels + " --kineto " + kOutMlp,
                   "is read for --timeline only");
  expectUsageError("calibrate --out " + dir.path() +
                       "/cal --families gemm --comm-sizes 1024 "
                       "--comm-iters 2 --sparse-add-rounds 2",
                   "--comm-sizes, --comm-iters are read by --families comm only");
  expectUsageError("calibrate --out " + dir.path() + "/cal --families comm --sparse-add-rounds 2",
                   "--sparse-add-rounds is read by --families sparse_add only");
  expectUsageError("predict " + kOutMlp + " --models " + kOutModels + " --host-cores 2",
                   "--host-cores applies to the ranks of a job given trace by trace");
  expectUsageError("compare " + kOutMlp + " --models " + kOutModels + " --host-cores 2",
                   "--host-cores applies with --nproc N");
  for (const char* option : {"--all", "--rounds 2", "--measure-iters 3", "--measure-device cuda",
                             "--core-tolerance 1.25"}) {
    expectUsageError("sweep " + testing::sourcePath("configs/sweeps/example.yaml") + " --models " +
                         kOutModels + " " + option,
                     "requires --measure");
  }
  expectUsageError("sweep " + testing::sourcePath("configs/sweeps/example.yaml") + " --models " +
                       kOutModels + " --measure --measure-device cuda --core-tolerance 1.25",
                   "--core-tolerance gates replays on this host's CPU cores");
  // An empty path (an unset shell variable) read as "no such output".
  for (const char* option : {"--csv", "--json-out"}) {
    expectUsageError("sweep " + testing::sourcePath("configs/sweeps/example.yaml") + " --models " +
                         kOutModels + " " + option + " ''",
                     std::string(option) + ": an empty file name");
  }
  expectUsageError("predict " + kOutMlp + " --models " + kOutModels + " --timeline ''",
                   "--timeline: an empty file name");
}

TEST(OutputOptionsCli, NumbersAreRefusedInWords) {
  // CLI11's own checks said "Value abc not in range 0.000000 to 1797...(309
  // digits)" and, for an int option given 1e9, "Could not convert".
  expectUsageError("replay " + kOutMlp + " --iters abc",
                   "--iters: abc: expected a whole number from 1 to 2147483647");
  expectUsageError("replay " + kOutMlp + " --iters 1e9",
                   "--iters: 1e9: expected a whole number from 1 to 2147483647");
  expectUsageError("replay " + kOutMlp + " --warmup 2.5",
                   "--warmup: 2.5: expected a whole number from 0 to 2147483647");
  expectUsageError("replay " + kOutMlp + " --seed -1",
                   "--seed: -1: expected a whole number from 0 to 9223372036854775807");
  expectUsageError("calibrate --out /tmp/never --budget-s inf",
                   "--budget-s: inf: expected a finite number above 0");
  expectUsageError("predict " + kOutMlp + " --models " + kOutModels + " --host-scale 0",
                   "--host-scale: 0: expected a number above 0 and at most 1000");
  // 1e300 made every time infinite, reported as a broken model set.
  expectUsageError("predict " + kOutMlp + " --models " + kOutModels + " --host-scale 1e300",
                   "--host-scale: 1e300: expected a number above 0 and at most 1000");
  expectUsageError("replay " + kOutMlp + " --host-time recorded --host-scale 1e300",
                   "--host-scale: 1e300: expected a number above 0 and at most 1000");
  expectUsageError("sweep " + testing::sourcePath("configs/sweeps/example.yaml") + " --models " +
                       kOutModels + " --verify 1e3",
                   "--verify: 1e3: expected a whole number from 0 to 1000000000");
}

}  // namespace
}  // namespace tracetwin
