// Which grid points a calibration measures: the families asked for, each
// family's grid for the device, and the --cases filter on their labels.
// Calibration-private.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "calibration/microbench.h"

namespace tracetwin::calibration {

// The registered families named (all when `names` is empty); UsageError
// listing the known ones for an unknown name.
std::vector<const MicrobenchFamily*> resolveFamilies(const std::vector<std::string>& names);

// The grid options of a device: "cpu", or a CUDA device, whose grids add
// half-precision dtypes and the sizes that keep a GPU busy. `dtypes`, when
// not empty, replaces the device's default dtypes (CPU: float32; CUDA:
// float32, float16, bfloat16): `calibrate --dtypes bfloat16` measures the
// kernels an autocast step runs.
GridOptions gridFor(const std::string& device, const std::vector<core::DType>& dtypes = {});

// The family's grid for `grid`, keeping only the labels the (ECMAScript)
// regular expression `case_filter` finds when it is not empty; UsageError
// when it does not parse.
std::vector<MicrobenchCase> gridCases(const MicrobenchFamily& fam, const GridOptions& grid,
                                      const std::string& case_filter);

// UsageError, before anything is measured, when a non-empty `case_filter`
// matches no grid point of `families`.
void checkCaseFilter(const std::vector<const MicrobenchFamily*>& families, const GridOptions& grid,
                     const std::string& case_filter);

// The floating dtypes named in `names` ("bfloat16", "float16", "float32",
// "float64"); UsageError naming the accepted ones otherwise.
std::vector<core::DType> parseGridDtypes(const std::vector<std::string>& names);

// The order a sweep visits `cases` in: the anchors first (in grid order),
// then 12 points at cost quantiles 0, 1/16, ..., 11/16 (the costliest
// quarter waits), then the rest in a random order drawn from `seed`. Without
// anchors, the order of the calibrations before anchors existed.
void orderForSweep(std::vector<MicrobenchCase>& cases, uint64_t seed);

}  // namespace tracetwin::calibration
