#include "cli/temp_directory.h"

#include <fmt/core.h>
#include <stdlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <system_error>

#include "core/errors.h"

namespace tracetwin::cli {

namespace fs = std::filesystem;

TempDirectory::TempDirectory(std::string_view prefix) {
  std::error_code ec;
  const fs::path base = fs::temp_directory_path(ec);
  if (ec) {
    const char* tmpdir = std::getenv("TMPDIR");
    throw InputError(fmt::format("no directory for temporary files: TMPDIR={}: {}",
                                 tmpdir != nullptr ? tmpdir : "(unset)", ec.message()));
  }
  std::string name = (base / fmt::format("{}-XXXXXX", prefix)).string();
  if (::mkdtemp(name.data()) == nullptr) {
    throw InputError(fmt::format("{}: cannot make a temporary directory there: {}", base.string(),
                                 std::strerror(errno)));
  }
  path_ = std::move(name);
}

TempDirectory::~TempDirectory() {
  if (std::uncaught_exceptions() > 0) {
    std::fprintf(stderr, "tracetwin: kept for inspection: %s\n", path_.c_str());
    return;
  }
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace tracetwin::cli
