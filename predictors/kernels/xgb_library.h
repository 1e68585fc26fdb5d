// XGBoost's C API, loaded when a tree is first built or read. Linked at start
// up, libxgboost (with libgomp and libdmlc) took 2.3 ms of every tracetwin
// process here, most of `--help`'s time, for the commands that never touch a
// tree (inspect, link, host, export): the same reason LibTorch lives in
// tracetwin-replay (docs/architecture.md, "Two executables").
#pragma once

#include <xgboost/c_api.h>  // the functions' types; the library is not linked

#include <string>

namespace tracetwin::predictors {

// Named as the C functions they point to.
struct XgbApi {
  decltype(&::XGBGetLastError) XGBGetLastError;
  decltype(&::XGDMatrixCreateFromMat) XGDMatrixCreateFromMat;
  decltype(&::XGDMatrixSetFloatInfo) XGDMatrixSetFloatInfo;
  decltype(&::XGDMatrixFree) XGDMatrixFree;
  decltype(&::XGBoosterCreate) XGBoosterCreate;
  decltype(&::XGBoosterFree) XGBoosterFree;
  decltype(&::XGBoosterSetParam) XGBoosterSetParam;
  decltype(&::XGBoosterUpdateOneIter) XGBoosterUpdateOneIter;
  decltype(&::XGBoosterPredict) XGBoosterPredict;
  decltype(&::XGBoosterSaveModel) XGBoosterSaveModel;
  decltype(&::XGBoosterLoadModel) XGBoosterLoadModel;
  decltype(&::XGBoosterGetNumFeature) XGBoosterGetNumFeature;
};

// The library the build found (its path, then its soname on the loader's
// path), loaded once, thread-safe. Throws UnavailableError naming the library
// and the loader's message when it or one of the functions is missing.
const XgbApi& xgbApi();

// Loads `path`, else `soname` from the loader's path, and binds the functions
// (what xgbApi does once with the build's library; tests name others).
XgbApi loadXgbApi(const std::string& path, const std::string& soname);

}  // namespace tracetwin::predictors
