// tracetwin: one binary, one subcommand per job. The only place that decides
// exit codes: library code throws typed errors (core/errors.h), caught here.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <new>
#include <string>
#include <system_error>

#include "cli/command_registry.h"
#include "cli/exit_codes.h"
#include "cli/huge_page_heap.h"
#include "cli/replay_exec.h"
#include "core/errors.h"

namespace {

// The last word on stderr. It must not throw: fmt::print does when stderr is
// closed or full (`2>&-` under cron), which inside a catch handler ended the
// process with std::terminate instead of the error's exit code.
int report(const char* kind, const char* what, int code) {
  std::fprintf(stderr, "tracetwin: %s: %s\n", kind, what);
  return code;
}

int stdoutFailed(int error) {
  const std::string why = "writing the standard output: " +
                          std::string(error != 0 ? std::strerror(error) : "a write error");
  return report("failed", why.c_str(), tracetwin::cli::kExitRuntime);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tracetwin;
  // First: it may start this binary again (cli/huge_page_heap.h).
  cli::startWithHugePageHeap(argc, argv);
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
    cli::checkForwardingBuild();  // tracetwin-replay: run by its own build's tracetwin
  } catch (const UnavailableError& e) {
    return report("unavailable", e.what(), cli::kExitUnavailable);
  }
  if (argc >= 2 && argv[1][0] != '-') {
    const std::string unknown = cli::unknownCommandMessage(argv[1]);
    if (!unknown.empty()) return report("error", unknown.c_str(), cli::kExitUsage);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    if (code != 0) return cli::kExitUsage;
    // --help and --version print to stdout: `--help > /dev/full` lost the text.
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) return stdoutFailed(errno);
    return cli::kExitOk;
  }

  try {
    if (action) action();
    // A report printed to a full disk or a closed stdout (`> out.txt` on a
    // full file system) must not end as success: the text was lost.
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) return stdoutFailed(errno);
    return cli::kExitOk;
  } catch (const InputError& e) {
    return report("error", e.what(), cli::kExitInput);
  } catch (const UsageError& e) {
    return report("error", e.what(), cli::kExitUsage);
  } catch (const UnavailableError& e) {
    return report("unavailable", e.what(), cli::kExitUnavailable);
  } catch (const RuntimeFailure& e) {
    return report("failed", e.what(), cli::kExitRuntime);
  } catch (const InterruptedError& e) {
    return report("interrupted", e.what(), cli::kExitInterrupted);
  } catch (const std::bad_alloc&) {
    return report("failed", "out of memory", cli::kExitRuntime);
  } catch (const std::filesystem::filesystem_error& e) {
    // The environment, not a bug: TMPDIR naming no directory, a working
    // directory deleted under the shell (no absolute paths then).
    return report("error", e.what(), cli::kExitInput);
  } catch (const std::system_error& e) {
    // fmt::print throws this when a long report's write to stdout fails.
    if (std::ferror(stdout)) return stdoutFailed(e.code().value());
    return report("internal error", e.what(), cli::kExitInternal);
  } catch (const std::exception& e) {
    return report("internal error", e.what(), cli::kExitInternal);
  }
}
