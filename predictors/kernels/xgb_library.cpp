#include "predictors/kernels/xgb_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <string>

#include "core/errors.h"

#ifndef TRACETWIN_XGBOOST_LIBRARY
#error \
    "TRACETWIN_XGBOOST_LIBRARY: the path of libxgboost the build found (predictors/CMakeLists.txt)"
#endif
#ifndef TRACETWIN_XGBOOST_SONAME
#error "TRACETWIN_XGBOOST_SONAME: libxgboost's soname (predictors/CMakeLists.txt)"
#endif

namespace tracetwin::predictors {
namespace {

template <typename Fn>
void bind(void* library, const std::string& path, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(::dlsym(library, name));
  if (fn == nullptr) {
    throw UnavailableError(
        fmt::format("XGBoost's {} is missing from {} (XGBoost 1.6 is needed: "
                    "the Debian package libxgboost0)",
                    name, path));
  }
}

}  // namespace

XgbApi loadXgbApi(const std::string& path, const std::string& soname) {
  // RTLD_LOCAL: its symbols (and dmlc's) stay out of the global scope.
  std::string loaded = path;
  void* library = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string first_error;
  if (library == nullptr) {
    first_error = ::dlerror();
    loaded = soname;
    library = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (library == nullptr) {
    throw UnavailableError(fmt::format(
        "XGBoost could not be loaded for the kernel models' trees: {}; {} (install the Debian "
        "package libxgboost0, or put its directory on LD_LIBRARY_PATH)",
        first_error, ::dlerror()));
  }
  XgbApi api{};
  try {
#define BIND(fn) bind(library, loaded, #fn, api.fn)
    BIND(XGBGetLastError);
    BIND(XGDMatrixCreateFromMat);
    BIND(XGDMatrixSetFloatInfo);
    BIND(XGDMatrixFree);
    BIND(XGBoosterCreate);
    BIND(XGBoosterFree);
    BIND(XGBoosterSetParam);
    BIND(XGBoosterUpdateOneIter);
    BIND(XGBoosterPredict);
    BIND(XGBoosterSaveModel);
    BIND(XGBoosterLoadModel);
    BIND(XGBoosterGetNumFeature);
#undef BIND
  } catch (...) {
    ::dlclose(library);
    throw;
  }
  return api;  // the library stays loaded until the process ends
}

const XgbApi& xgbApi() {
  // A throw leaves it unset: the next call tries again.
  static const XgbApi api = loadXgbApi(TRACETWIN_XGBOOST_LIBRARY, TRACETWIN_XGBOOST_SONAME);
  return api;
}

}  // namespace tracetwin::predictors
