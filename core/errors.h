// Typed errors for every layer. Library code throws these; only cli/main.cpp
// turns them into an exit code and one line on stderr.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tracetwin {

// Base of every error tracetwin raises on purpose. what() is the one line the
// user sees; it already names the file and the position or node at fault.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Input that cannot be read as what it claims to be: bad JSON, bad gzip,
// unknown schema, missing or wrongly typed keys, dangling parents, cycles.
// Exit code 2.
class InputError : public Error {
 public:
  using Error::Error;
};

// A command-line or configuration mistake (unknown option value, bad YAML key).
// Exit code 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

// Hardware or build feature missing at run time (no GPU, built without
// LibTorch/CUDA/CUPTI). Exit code 3.
class UnavailableError : public Error {
 public:
  using Error::Error;
};

// Something failed while running a workload (replay op failed under --strict,
// out of memory). Exit code 4.
class RuntimeFailure : public Error {
 public:
  using Error::Error;
};

// The user stopped the run (Ctrl-C) after a partial report was written.
// Exit code 130, as shells report SIGINT.
class InterruptedError : public Error {
 public:
  using Error::Error;
};

}  // namespace tracetwin
