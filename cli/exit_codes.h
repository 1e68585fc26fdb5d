#pragma once

namespace tracetwin::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;     // a bug: an exception we did not expect
inline constexpr int kExitInput = 2;        // unreadable trace / model / config (InputError)
inline constexpr int kExitUsage = 2;        // bad command line or configuration (UsageError)
inline constexpr int kExitUnavailable = 3;  // hardware or build feature missing
inline constexpr int kExitRuntime = 4;      // workload failed (strict replay, OOM)
inline constexpr int kExitInterrupted = 130;

}  // namespace tracetwin::cli
