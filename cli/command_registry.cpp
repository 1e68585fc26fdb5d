#include "cli/command_registry.h"

#include <utility>

namespace tracetwin::cli {

std::vector<CommandSpec>& commandRegistry() {
  static std::vector<CommandSpec> registry;  // function-local: safe static-init order
  return registry;
}

CommandRegistration::CommandRegistration(CommandSpec spec) {
  commandRegistry().push_back(std::move(spec));
}

}  // namespace tracetwin::cli
