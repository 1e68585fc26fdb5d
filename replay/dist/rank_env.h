// Which rank this process is, read from the environment the launcher set:
// torchrun (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), Slurm's
// srun (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID), Open MPI
// (OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK) and PMI launchers such as MPICH's
// Hydra (PMI_RANK, PMI_SIZE), or `tracetwin replay --nproc`. Torch-free.
#pragma once

#include <functional>
#include <string>

namespace tracetwin::replay::dist {

struct RankEnv {
  // "torchrun", "tracetwin", "slurm", "openmpi", "pmi"; empty: not launched
  // as one rank of a job (a plain single-process replay).
  std::string launcher;
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr;  // host of the rendezvous store
  int master_port = 0;
  // torchrun's agent hosts the TCPStore at MASTER_ADDR:MASTER_PORT itself
  // (TORCHELASTIC_USE_AGENT_STORE=True); otherwise rank 0 hosts it.
  bool agent_store = false;

  bool launched() const { return !launcher.empty(); }
  bool hostsStore() const { return rank == 0 && !agent_store; }
};

// Names the environment variable read (nullptr when unset); std::getenv by default.
using EnvLookup = std::function<const char*(const char*)>;

// Set by `tracetwin replay --nproc` in the processes it starts.
inline constexpr const char* kLauncherVariable = "TRACETWIN_RANK_LAUNCHER";

// Reads the launch environment. Throws UsageError naming the variable when a
// value is not a number, a rank is outside [0, world size), or a launcher
// that does not set MASTER_ADDR/MASTER_PORT (Slurm, MPI) left them unset.
RankEnv detectRankEnv(const EnvLookup& lookup = {});

// "DIR/rank{rank}.et.json.gz" with rank 3 -> "DIR/rank3.et.json.gz".
std::string expandRankPath(const std::string& pattern, int rank);
bool hasRankPlaceholder(const std::string& pattern);

// The ranks of a job found on disk: `pattern` expanded for 0, 1, ... up to
// the first missing file. Throws UsageError when a file of a higher rank
// (within 4096) exists past that gap: the job's ranks would silently shrink
// to the ones before it (a bad-input hunt: 3 of dlrm's 8 ranks, exit 0).
int countRankFiles(const std::string& pattern);

}  // namespace tracetwin::replay::dist
