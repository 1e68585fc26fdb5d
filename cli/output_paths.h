// Files a command writes (--json-out, --timeline, --csv, --overheads-out):
// checked when the command line is parsed, before minutes of replay or
// prediction are spent on results that could not be written.
#pragma once

#include <CLI/CLI.hpp>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace tracetwin::cli {

// For add_option(...)->check(): the file's directory must exist and the path
// must not be a directory.
CLI::Validator outputFile();

// For add_option(...)->check(): a directory to write files into: one that
// exists, or one whose parent exists (made when written), never a file.
CLI::Validator outputDirectory();

// Throws UsageError when two of the named outputs are one path: the second
// write overwrote the first.
void requireDistinctOutputs(
    std::initializer_list<std::pair<std::string_view, const std::string*>> outputs);

}  // namespace tracetwin::cli
