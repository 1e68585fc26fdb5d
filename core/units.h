// Unit factors used across the layers (device specs are in bytes per second
// and seconds; the models and the simulation in microseconds). One
// definition: files of one target share unity batches, where private copies
// of the same constant clash.
#pragma once

namespace tracetwin::core {

inline constexpr double kUsPerSecond = 1e6;
inline constexpr double kGiga = 1e9;
inline constexpr double kMicro = 1e-6;

}  // namespace tracetwin::core
