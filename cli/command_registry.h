// Subcommands register themselves here, one file each (inspect_command.cpp,
// replay_command.cpp, ...), so main.cpp never grows an if/else chain.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace tracetwin::cli {

struct CommandSpec {
  std::string name;
  std::string description;
  // Declares the subcommand's options on `sub` and returns the action to run
  // after parsing. The action throws tracetwin::Error subclasses on failure.
  std::function<std::function<void()>(CLI::App& sub)> setup;
};

std::vector<CommandSpec>& commandRegistry();

// "" when `word` names a registered command; otherwise the error to print:
// CLI11 took an unknown word for a positional and said only "A subcommand is
// required". Suggests the closest command (two edits at most).
std::string unknownCommandMessage(const std::string& word);

struct CommandRegistration {
  explicit CommandRegistration(CommandSpec spec);
};

}  // namespace tracetwin::cli

// Usage, at namespace scope in a command's .cpp file:
//   TRACETWIN_REGISTER_COMMAND(inspect, "Summarise a trace", setupInspect);
#define TRACETWIN_REGISTER_COMMAND(ident, description, setup_fn)                     \
  static const ::tracetwin::cli::CommandRegistration tracetwin_command_##ident{      \
      ::tracetwin::cli::CommandSpec{#ident, description, setup_fn}}
