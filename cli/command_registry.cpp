#include "cli/command_registry.h"

#include <algorithm>
#include <utility>

namespace tracetwin::cli {

std::vector<CommandSpec>& commandRegistry() {
  static std::vector<CommandSpec> registry;  // function-local: safe static-init order
  return registry;
}

namespace {

// Levenshtein distance: insertions, deletions and substitutions.
size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string unknownCommandMessage(const std::string& word) {
  const std::string* closest = nullptr;
  size_t best = 3;  // farther than two edits is no suggestion
  for (const CommandSpec& spec : commandRegistry()) {
    if (spec.name == word) return "";
    const size_t d = editDistance(word, spec.name);
    if (d < best) {
      best = d;
      closest = &spec.name;
    }
  }
  return "'" + word + "' is not a tracetwin command" +
         (closest ? "; did you mean '" + *closest + "'?" : "") + " (`tracetwin --help` lists them)";
}

CommandRegistration::CommandRegistration(CommandSpec spec) {
  commandRegistry().push_back(std::move(spec));
}

}  // namespace tracetwin::cli
