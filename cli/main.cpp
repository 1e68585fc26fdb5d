// tracetwin: one binary, one subcommand per job. The only place that decides
// exit codes: library code throws typed errors (core/errors.h), caught here.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <new>

#include "cli/command_registry.h"
#include "cli/exit_codes.h"
#include "core/errors.h"

int main(int argc, char** argv) {
  using namespace tracetwin;
  CLI::App app{"tracetwin: replay and predict PyTorch execution traces"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tracetwin 0.1.0");

  auto& registry = cli::commandRegistry();
  std::sort(registry.begin(), registry.end(),
            [](const cli::CommandSpec& a, const cli::CommandSpec& b) { return a.name < b.name; });
  std::function<void()> action;
  for (const cli::CommandSpec& spec : registry) {
    CLI::App* sub = app.add_subcommand(spec.name, spec.description);
    auto run = spec.setup(*sub);
    sub->callback([&action, run] { action = run; });
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? cli::kExitOk : cli::kExitUsage;
  }

  try {
    if (action) action();
    // A report printed to a full disk or a closed stdout (`> out.txt` on a
    // full file system) must not end as success: the text was lost.
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      fmt::print(stderr, "tracetwin: failed: writing the standard output: {}\n",
                 errno != 0 ? std::strerror(errno) : "a write error");
      return cli::kExitRuntime;
    }
    return cli::kExitOk;
  } catch (const InputError& e) {
    fmt::print(stderr, "tracetwin: error: {}\n", e.what());
    return cli::kExitInput;
  } catch (const UsageError& e) {
    fmt::print(stderr, "tracetwin: error: {}\n", e.what());
    return cli::kExitUsage;
  } catch (const UnavailableError& e) {
    fmt::print(stderr, "tracetwin: unavailable: {}\n", e.what());
    return cli::kExitUnavailable;
  } catch (const RuntimeFailure& e) {
    fmt::print(stderr, "tracetwin: failed: {}\n", e.what());
    return cli::kExitRuntime;
  } catch (const InterruptedError& e) {
    fmt::print(stderr, "tracetwin: interrupted: {}\n", e.what());
    return cli::kExitInterrupted;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "tracetwin: failed: out of memory\n");
    return cli::kExitRuntime;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tracetwin: internal error: {}\n", e.what());
    return cli::kExitInternal;
  }
}
