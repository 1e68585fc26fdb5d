// The files this process read as inputs, so that no output replaces one:
// `predict t.et.json.gz --json-out t.et.json.gz` overwrote the user's trace
// with its report, `sweep s.yaml --csv s.yaml` its sweep file. The readers
// (traces, text files) note what they open; writers ask before they replace
// a file. A model directory's files are inputs of another use: `calibrate
// --refit` and `fit --out` update a directory they read, on purpose, but no
// report may replace one. Files are told apart by device and inode (with the
// modification time and size, against reused inode numbers), so another
// spelling of a path, a symlink or a hard link is the same file.
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

enum class InputUse {
  kReadOnly,  // a trace, a sweep file, a spec: never replaced
  kModel,     // a model directory's file: replaced only by the models' own writers
};

// Notes the file at `path` as read (nothing when it cannot be stat'ed). A
// file noted both ways is read-only.
void noteInputFile(const std::string& path, InputUse use = InputUse::kReadOnly);

// Throws InputError "<path>: is one of this command's inputs (<what> would
// replace it)" when `path` names a file this process read: any of them, or
// with `updating_models`, a read-only one.
void refuseOverwritingAnInput(const std::string& path, std::string_view what,
                              bool updating_models = false);

}  // namespace tracetwin::core
