// Cross-device scaling of calibrated kernel times (Habitat, ATC 2021):
//   t_d = t_o * (BW_o/BW_d)^g * (clk_o/clk_d)^(1-g) * (SM_o/SM_d)^(1-g)
// with g (gamma) in [0,1] from the kernel's arithmetic intensity against the
// destination's ridge point: g = 1 for memory-bound kernels, 0 for
// compute-bound ones, linear in log(intensity) in between.
#pragma once

#include "predictors/specs/device_spec.h"
#include "predictors/kernels/features.h"

namespace tracetwin::predictors {

// Memory-boundness in [0,1] for a kernel of `flops` and `bytes` on `dest`.
double habitatGamma(double flops, double bytes, core::DType dtype, const DeviceSpec& dest);

// The memory side's time ratio dest / origin for a kernel moving `bytes`:
// the DRAM bandwidth ratio for the bytes beyond the smaller last-level cache,
// the on-chip ratio (clock x SMs: a GPU's L2 slices run at its clock) for
// the bytes within it. The DRAM ratio alone when either device lists no
// cache or `bytes` is 0.
double memoryRatio(const DeviceSpec& origin, const DeviceSpec& dest, double bytes);

// Scales a time measured on `origin` to `dest` (`bytes`: the kernel's
// traffic, for memoryRatio).
double habitatScale(double origin_us, double gamma, const DeviceSpec& origin,
                    const DeviceSpec& dest, double bytes = 0);

// A GPU spec without its SM count: calibrations before 2026-11-26 recorded one
// compute unit and the host CPU's clock for the GPU they measured.
bool lacksComputeFacts(const DeviceSpec& d);

// A GPU calibration's spec lists no caches (calibrate keeps the L2 in its
// sources: in `caches` it would change the analytic bases its residuals
// were fitted over) while the GPU it is scaled to lists some.
bool lacksCacheFacts(const DeviceSpec& origin, const DeviceSpec& dest);

// The origin habitatScale compares `dest` with: `origin`, except that a GPU
// spec lacking its compute facts takes the destination's SM count and clock
// (only bandwidth then scales; against one compute unit, an H200 set scaled
// to the H100 datasheet put mlp_big at 1.2 ms, replayed 18.6), and one
// lacking its caches takes the destination's (exact between GPUs of one die,
// such as the H200 and H100; an over-estimate of the cache-resident traffic
// when scaling to a GPU with a larger L2).
DeviceSpec scalingOrigin(const DeviceSpec& origin, const DeviceSpec& dest);

// Collective time scaling: by link bandwidth ratio of the link named `link`
// (or the fastest of each device when empty).
double commScale(double origin_us, const DeviceSpec& origin, const DeviceSpec& dest,
                 const std::string& link);

}  // namespace tracetwin::predictors
