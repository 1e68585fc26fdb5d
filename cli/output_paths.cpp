#include "cli/output_paths.h"

#include <fmt/core.h>

#include <filesystem>
#include <system_error>
#include <vector>

#include "core/errors.h"

namespace tracetwin::cli {

namespace fs = std::filesystem;

CLI::Validator outputFile() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        // `--csv ""` (an unset shell variable) was read as "no --csv" and
        // the output silently not written.
        if (path.empty()) return "an empty file name";
        std::error_code ec;
        if (fs::is_directory(path, ec)) return fmt::format("{}: is a directory, not a file", path);
        const fs::path parent = fs::path(path).parent_path();
        if (!parent.empty() && !fs::is_directory(parent, ec)) {
          return fmt::format("{}: its directory {} does not exist", path, parent.string());
        }
        return {};
      },
      "FILE (in an existing directory)");
}

CLI::Validator outputDirectory() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        if (path.empty()) return "an empty directory name";
        std::error_code ec;
        if (fs::exists(path, ec) && !fs::is_directory(path, ec)) {
          return fmt::format("{}: is a file, not a directory", path);
        }
        const fs::path parent = fs::path(path).parent_path();
        if (!fs::exists(path, ec) && !parent.empty() && !fs::is_directory(parent, ec)) {
          return fmt::format("{}: its directory {} does not exist", path, parent.string());
        }
        return {};
      },
      "DIR (existing, or in an existing directory)");
}

void requireDistinctOutputs(
    std::initializer_list<std::pair<std::string_view, const std::string*>> outputs) {
  std::vector<std::pair<std::string_view, fs::path>> seen;
  for (const auto& [option, path] : outputs) {
    if (path->empty()) continue;
    // Through symlinks (of the file or a directory above it) and, where the
    // files exist, hard links: the same file under two names.
    std::error_code ec;
    fs::path normal = fs::weakly_canonical(*path, ec);
    if (ec) normal = fs::path(*path).lexically_normal();
    for (const auto& [other, other_path] : seen) {
      std::error_code same_ec;
      if (other_path == normal || fs::equivalent(other_path, normal, same_ec)) {
        throw UsageError(
            fmt::format("{} and {} name one file, {}: the second would overwrite "
                        "the first",
                        other, option, *path));
      }
    }
    seen.emplace_back(option, normal);
  }
}

}  // namespace tracetwin::cli
