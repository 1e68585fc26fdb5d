// Launch environments (replay/dist/rank_env.h): each launcher's variables,
// their precedence, and the errors for half-set or nonsensical ones.
#include "replay/dist/rank_env.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "core/errors.h"

namespace tracetwin::replay::dist {
namespace {

RankEnv detect(const std::map<std::string, std::string>& vars) {
  return detectRankEnv([&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

const std::map<std::string, std::string> kMaster = {{"MASTER_ADDR", "10.0.0.1"},
                                                    {"MASTER_PORT", "29500"}};

std::map<std::string, std::string> with(std::map<std::string, std::string> vars) {
  vars.insert(kMaster.begin(), kMaster.end());
  return vars;
}

TEST(RankEnv, NoLauncherIsASingleProcess) {
  const RankEnv env = detect({});
  EXPECT_FALSE(env.launched());
  EXPECT_EQ(env.world_size, 1);
}

TEST(RankEnv, Torchrun) {
  const RankEnv env = detect(with({{"RANK", "3"},
                                   {"WORLD_SIZE", "8"},
                                   {"LOCAL_RANK", "1"},
                                   {"LOCAL_WORLD_SIZE", "2"},
                                   {"TORCHELASTIC_USE_AGENT_STORE", "True"}}));
  EXPECT_EQ(env.launcher, "torchrun");
  EXPECT_EQ(env.rank, 3);
  EXPECT_EQ(env.world_size, 8);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.local_world_size, 2);
  EXPECT_EQ(env.master_addr, "10.0.0.1");
  EXPECT_EQ(env.master_port, 29500);
  EXPECT_TRUE(env.agent_store);
  EXPECT_FALSE(env.hostsStore());  // torchrun's agent hosts it
}

TEST(RankEnv, TracetwinLauncherMarksItself) {
  const RankEnv env = detect(with({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {kLauncherVariable, "1"}}));
  EXPECT_EQ(env.launcher, "tracetwin");
  EXPECT_TRUE(env.hostsStore());
  EXPECT_EQ(env.local_rank, 0);  // LOCAL_RANK unset: the rank
}

TEST(RankEnv, SlurmOnlyInsideAJobStep) {
  const std::map<std::string, std::string> batch = {
      {"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "4"}, {"SLURM_LOCALID", "1"}};
  // A batch script has SLURM_PROCID and SLURM_NTASKS too, but is not a rank.
  EXPECT_FALSE(detect(with(batch)).launched());
  auto step = with(batch);
  step["SLURM_STEP_ID"] = "0";
  const RankEnv env = detect(step);
  EXPECT_EQ(env.launcher, "slurm");
  EXPECT_EQ(env.rank, 1);
  EXPECT_EQ(env.world_size, 4);
  EXPECT_EQ(env.local_rank, 1);
}

TEST(RankEnv, OpenMpiAndPmi) {
  const RankEnv ompi = detect(with({{"OMPI_COMM_WORLD_RANK", "2"},
                                    {"OMPI_COMM_WORLD_SIZE", "4"},
                                    {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                                    {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}));
  EXPECT_EQ(ompi.launcher, "openmpi");
  EXPECT_EQ(ompi.rank, 2);
  EXPECT_EQ(ompi.local_world_size, 2);
  const RankEnv pmi = detect(with({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}}));
  EXPECT_EQ(pmi.launcher, "pmi");
  EXPECT_EQ(pmi.rank, 1);
}

TEST(RankEnv, TorchrunVariablesWinOverMpiOnes) {
  const RankEnv env = detect(with(
      {{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"PMI_RANK", "0"}, {"PMI_SIZE", "2"}}));
  EXPECT_EQ(env.launcher, "torchrun");
  EXPECT_EQ(env.rank, 1);
}

TEST(RankEnv, BadValuesNameTheVariable) {
  try {
    detect(with({{"RANK", "x1"}, {"WORLD_SIZE", "2"}}));
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("RANK='x1'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(detect(with({{"RANK", "2"}, {"WORLD_SIZE", "2"}})), UsageError);
  EXPECT_THROW(detect(with({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}})),
               UsageError);
}

TEST(RankEnv, MissingRendezvousIsAnError) {
  try {
    detect({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}});
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("MASTER_ADDR and MASTER_PORT"), std::string::npos)
        << e.what();
  }
}

// Inside `srun --pty bash` (one task, a job step) or `mpirun -np 1 bash`, a
// plain replay is a single process, not rank 0 of a job with no rendezvous.
TEST(RankEnv, AOneTaskShellWithoutRendezvousIsASingleProcess) {
  EXPECT_FALSE(
      detect({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}, {"SLURM_STEP_ID", "0"}}).launched());
  EXPECT_FALSE(detect({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "1"}}).launched());
  // With a rendezvous it is a one-rank job (torchrun --nproc_per_node 1).
  EXPECT_TRUE(detect(with({{"RANK", "0"}, {"WORLD_SIZE", "1"}})).launched());
}

TEST(RankPath, ExpandsEveryPlaceholder) {
  EXPECT_EQ(expandRankPath("d/rank{rank}.et.json.gz", 3), "d/rank3.et.json.gz");
  EXPECT_EQ(expandRankPath("r{rank}/x{rank}", 12), "r12/x12");
  EXPECT_EQ(expandRankPath("plain.json", 5), "plain.json");
  EXPECT_TRUE(hasRankPlaceholder("a{rank}"));
  EXPECT_FALSE(hasRankPlaceholder("a{rnk}"));
}

TEST(RankPath, RankFilesAreCountedAndAGapIsRefused) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tracetwin-ranks-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string pattern = (dir / "rank{rank}.json").string();
  EXPECT_EQ(countRankFiles(pattern), 0);
  for (int r : {0, 1, 2}) std::ofstream(expandRankPath(pattern, r)) << "{}";
  EXPECT_EQ(countRankFiles(pattern), 3);
  // Rank 3 missing, rank 4 present: the job would have shrunk to 3 ranks.
  std::ofstream(expandRankPath(pattern, 4)) << "{}";
  try {
    countRankFiles(pattern);
    ADD_FAILURE() << "a gap in the ranks was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 3's file is missing but rank 4's exists"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tracetwin::replay::dist
