// The whole of a small text file a user names (a spec, a model file, a side
// file), read with errors that say which file and why. Opening a directory
// with std::ifstream succeeds and the first read throws a bare
// std::ios_base::failure ("basic_filebuf::underflow"), which reached users as
// an internal error: every loader of user files reads through here instead.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/input_files.h"

namespace tracetwin::core {

// Throws InputError "<path>: cannot open <what>: <reason>", "<path>: is a
// directory, not <what>" or "<path>: read error: <reason>". The file is
// noted as an input of `use` (core/input_files.h).
std::string readTextFile(const std::string& path, std::string_view what,
                         InputUse use = InputUse::kReadOnly);

// As readTextFile, but std::nullopt when nothing exists at `path` (optional
// side files); a directory or an unreadable file is still an error.
std::optional<std::string> readTextFileIfPresent(const std::string& path, std::string_view what,
                                                 InputUse use = InputUse::kReadOnly);

// Writes `text` to `path`. A regular file (or a new one) is written beside
// itself and renamed over it, so a failed write leaves the old file whole and
// no partial one (mode and symlinks kept); a device, FIFO or pipe is written
// in place. Refuses a trace this process read (core/input_files.h). Throws
// InputError "<path>: cannot write: <reason>" (a missing directory, a full
// disk, a directory there).
void writeTextFile(const std::string& path, std::string_view text);
// As writeTextFile, for the models' own writers (a model directory's files):
// may replace a model file this process read (calibrate --refit), never a
// read-only input.
void updateModelFile(const std::string& path, std::string_view text);

}  // namespace tracetwin::core
