// The files this process read as inputs, so that no output replaces one:
// `predict t.et.json.gz --json-out t.et.json.gz` overwrote the user's trace
// with its report. The trace readers (ETs, Kineto traces) note what they
// open; writers ask before they replace a file. Text inputs (specs, model
// files, datasets) are not noted: `calibrate --refit` and `fit --out` update
// a model directory they read, on purpose. Files are told apart by device and inode (with the
// modification time and size, against reused inode numbers), so another spelling of a path, a
// symlink or a hard link is the same file.
#pragma once

#include <string>
#include <string_view>

namespace tracetwin::core {

// Why `path` cannot be read as an input, or "" when it can: a regular file,
// or a pipe (`tracetwin inspect <(zcat t.json.gz)`). "file does not exist",
// "is a directory" or "is a character device" (/dev/zero was read without
// end) ...
std::string inputFileProblem(const std::string& path);
// The same for the file type bits of an opened file's st_mode.
std::string inputFileKindProblem(unsigned mode);

// Notes the file at `path` as read (nothing when it cannot be stat'ed).
void noteInputFile(const std::string& path);

// Throws InputError "<path>: is one of this command's inputs (<what> would
// replace it)" when `path` names a file this process read.
void refuseOverwritingAnInput(const std::string& path, std::string_view what);

}  // namespace tracetwin::core
