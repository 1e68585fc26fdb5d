#include "replay/dist/rank_env.h"

#include <fmt/core.h>

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string_view>

#include "core/errors.h"

namespace tracetwin::replay::dist {
namespace {

constexpr std::string_view kPlaceholder = "{rank}";

class Env {
 public:
  explicit Env(const EnvLookup& lookup) : lookup_(lookup) {}

  std::optional<std::string> text(const char* name) const {
    const char* v = lookup_ ? lookup_(name) : std::getenv(name);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  }

  std::optional<int> number(const char* name) const {
    auto v = text(name);
    if (!v) return std::nullopt;
    int out = 0;
    const char* end = v->data() + v->size();
    auto [ptr, ec] = std::from_chars(v->data(), end, out);
    if (ec != std::errc() || ptr != end || out < 0) {
      throw UsageError(fmt::format("environment variable {}='{}': expected a non-negative integer",
                                   name, *v));
    }
    return out;
  }

 private:
  const EnvLookup& lookup_;
};

// One launcher's variable names, in the order they are tried.
struct Convention {
  const char* launcher;
  const char* rank;
  const char* size;
  const char* local_rank;  // nullptr: derived
  const char* local_size;  // nullptr: derived
  const char* required;    // must be set too for the convention to apply (nullptr: none)
};

// Slurm sets SLURM_PROCID and SLURM_NTASKS in a batch script as well; only
// srun's job steps (SLURM_STEP_ID) are ranks of a launched job.
constexpr Convention kConventions[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", nullptr},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE",
     "SLURM_STEP_ID"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE", nullptr},
    {"pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", nullptr},
};

}  // namespace

RankEnv detectRankEnv(const EnvLookup& lookup) {
  const Env env(lookup);
  RankEnv out;
  for (const Convention& c : kConventions) {
    auto rank = env.number(c.rank);
    auto size = env.number(c.size);
    if (!rank || !size) continue;
    if (c.required && !env.text(c.required)) continue;
    out.launcher = c.launcher;
    if (env.text(kLauncherVariable)) out.launcher = "tracetwin";
    out.rank = *rank;
    out.world_size = *size;
    out.local_rank = env.number(c.local_rank).value_or(out.rank);
    out.local_world_size = env.number(c.local_size).value_or(out.world_size);
    if (out.world_size < 1 || out.rank >= out.world_size) {
      throw UsageError(fmt::format("{}={} with {}={}: expected 0 <= rank < world size", c.rank,
                                   out.rank, c.size, out.world_size));
    }
    if (out.local_rank >= out.local_world_size) out.local_world_size = out.local_rank + 1;
    auto addr = env.text("MASTER_ADDR");
    auto port = env.number("MASTER_PORT");
    // A job of one task without a rendezvous is a shell, not a rank: `srun
    // --pty bash` and `mpirun -np 1 bash` set these for everything run inside
    // them, and a plain replay there failed for want of MASTER_ADDR.
    if ((!addr || !port) && out.world_size == 1 && out.launcher != "tracetwin") return RankEnv{};
    if (!addr || !port) {
      throw UsageError(fmt::format(
          "launched by {} as rank {} of {}, but MASTER_ADDR and MASTER_PORT are not both set: "
          "export the rendezvous host and port (rank 0's host and a free port) for every rank",
          out.launcher, out.rank, out.world_size));
    }
    if (*port == 0 || *port > 65535) {
      throw UsageError(fmt::format("MASTER_PORT={}: expected a port in 1..65535", *port));
    }
    out.master_addr = *addr;
    out.master_port = *port;
    const auto agent = env.text("TORCHELASTIC_USE_AGENT_STORE");
    out.agent_store = agent && (*agent == "True" || *agent == "true" || *agent == "1");
    return out;
  }
  return out;
}

bool hasRankPlaceholder(const std::string& pattern) {
  return pattern.find(kPlaceholder) != std::string::npos;
}

int countRankFiles(const std::string& pattern) {
  int world = 0;
  while (std::filesystem::exists(expandRankPath(pattern, world))) ++world;
  constexpr int kLookAhead = 4096;
  for (int r = world + 1; r <= world + kLookAhead; ++r) {
    if (std::filesystem::exists(expandRankPath(pattern, r))) {
      throw UsageError(fmt::format(
          "{}: rank {}'s file is missing but rank {}'s exists ({}): a job's ranks are numbered "
          "0..N-1 without gaps",
          pattern, world, r, expandRankPath(pattern, r)));
    }
  }
  return world;
}

std::string expandRankPath(const std::string& pattern, int rank) {
  std::string out = pattern;
  const std::string number = std::to_string(rank);
  for (size_t at = out.find(kPlaceholder); at != std::string::npos;
       at = out.find(kPlaceholder, at + number.size())) {
    out.replace(at, kPlaceholder.size(), number);
  }
  return out;
}

}  // namespace tracetwin::replay::dist
