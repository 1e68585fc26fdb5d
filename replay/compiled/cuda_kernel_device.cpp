// KernelDevice on the CUDA driver API (compiled with the CUDA toolkit; see
// kernel_device.h). Driver functions come from the runtime's driver entry
// points, so the binary does not need libcuda.so to start on a host without
// a driver: only building the device asks the driver for them.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <fmt/core.h>

#include <fstream>
#include <iterator>
#include <map>
#include <vector>

#include "core/errors.h"
#include "replay/compiled/kernel_device.h"
#include "replay/compiled/torch_cuda_stream.h"
#include "replay/device/cuda_check.h"
#include "replay/device/device_timer.h"

namespace tracetwin::replay::compiled {
namespace {

// The driver functions used, as the driver exports them.
struct DriverApi {
  CUresult(CUDAAPI* moduleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult(CUDAAPI* moduleUnload)(CUmodule) = nullptr;
  CUresult(CUDAAPI* moduleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult(CUDAAPI* launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  unsigned, unsigned, CUstream, void**, void**) = nullptr;
  CUresult(CUDAAPI* funcGetAttribute)(int*, CUfunction_attribute, CUfunction) = nullptr;
  CUresult(CUDAAPI* funcSetAttribute)(CUfunction, CUfunction_attribute, int) = nullptr;
  CUresult(CUDAAPI* funcSetCacheConfig)(CUfunction, CUfunc_cache) = nullptr;
  CUresult(CUDAAPI* ctxGetDevice)(CUdevice*) = nullptr;
  CUresult(CUDAAPI* deviceGetAttribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult(CUDAAPI* getErrorName)(CUresult, const char**) = nullptr;
};

template <typename Fn>
void entryPoint(const char* symbol, Fn* out) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
  // 12000: the ABI these symbols have had since CUDA 12.0.
  const cudaError_t status =
      cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &found);
#else
  const cudaError_t status = cudaGetDriverEntryPoint(symbol, &fn, cudaEnableDefault, &found);
#endif
  if (status != cudaSuccess || found != cudaDriverEntryPointSuccess || fn == nullptr) {
    throw UnavailableError(
        fmt::format("the CUDA driver has no {} ({})", symbol,
                    status == cudaSuccess ? "symbol not found" : cudaGetErrorString(status)));
  }
  *out = reinterpret_cast<Fn>(fn);
}

DriverApi loadDriverApi() {
  DriverApi d;
  entryPoint("cuModuleLoadData", &d.moduleLoadData);
  entryPoint("cuModuleUnload", &d.moduleUnload);
  entryPoint("cuModuleGetFunction", &d.moduleGetFunction);
  entryPoint("cuLaunchKernel", &d.launchKernel);
  entryPoint("cuFuncGetAttribute", &d.funcGetAttribute);
  entryPoint("cuFuncSetAttribute", &d.funcSetAttribute);
  entryPoint("cuFuncSetCacheConfig", &d.funcSetCacheConfig);
  entryPoint("cuCtxGetDevice", &d.ctxGetDevice);
  entryPoint("cuDeviceGetAttribute", &d.deviceGetAttribute);
  entryPoint("cuGetErrorName", &d.getErrorName);
  return d;
}

// One thread spinning on the global nanosecond timer until `ns` have passed:
// a wait of a given wall time whatever the SM clock (clock64 counts cycles,
// which move with boost). The driver JIT-compiles this PTX for the device.
constexpr const char* kSpinPtx = R"(.version 7.0
.target sm_70
.address_size 64

.visible .entry tracetwin_spin_ns(
	.param .u64 tracetwin_spin_ns_param_0
)
{
	.reg .pred 	%p<2>;
	.reg .b64 	%rd<6>;

	ld.param.u64 	%rd1, [tracetwin_spin_ns_param_0];
	mov.u64 	%rd2, %globaltimer;
$L_spin:
	mov.u64 	%rd3, %globaltimer;
	sub.s64 	%rd4, %rd3, %rd2;
	setp.lt.u64 	%p1, %rd4, %rd1;
	@%p1 bra 	$L_spin;
	ret;
}
)";

class CudaKernelDevice : public KernelDevice {
 public:
  explicit CudaKernelDevice(int index) : index_(index) {
    device::requireCudaDevice(index);
    // LibTorch's primary context current on this thread before any driver call.
    TRACETWIN_CUDA_CALL(cudaSetDevice(index));
    TRACETWIN_CUDA_CALL(cudaFree(nullptr));
    api_ = loadDriverApi();
    check(api_.ctxGetDevice(&device_), "cuCtxGetDevice");
    check(api_.deviceGetAttribute(&shared_optin_,
                                  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device_),
          "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)");
    currentTorchCudaStream(index);  // throws UnavailableError without a CUDA LibTorch
  }

  ~CudaKernelDevice() override {
    for (auto& [path, loaded] : modules_) api_.moduleUnload(loaded.module);
    if (spin_module_ != nullptr) api_.moduleUnload(spin_module_);
  }

  std::string describe() const override { return fmt::format("cuda:{}, CUDA driver API", index_); }

  KernelHandle load(const TritonBinary& binary) override {
    if (auto it = modules_.find(binary.cubin_path); it != modules_.end())
      return it->second.function;
    std::ifstream in(binary.cubin_path, std::ios::binary);
    if (!in) throw InputError(fmt::format("{}: cannot open", binary.cubin_path));
    const std::vector<char> image((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
    Loaded loaded;
    check(api_.moduleLoadData(&loaded.module, image.data()),
          fmt::format("cuModuleLoadData({})", binary.cubin_path));
    try {
      check(api_.moduleGetFunction(&loaded.function, loaded.module, binary.name.c_str()),
            fmt::format("cuModuleGetFunction({}, {})", binary.cubin_path, binary.name));
      allowSharedMemory(loaded.function, binary);
    } catch (const Error&) {
      api_.moduleUnload(loaded.module);  // not kept: a later load tries again and fails alike
      throw;
    }
    modules_[binary.cubin_path] = loaded;  // unloaded by the destructor from here on
    return loaded.function;
  }

  void launch(KernelHandle kernel, const LaunchPlan& plan, void** params) override {
    auto fn = static_cast<CUfunction>(const_cast<void*>(kernel));
    check(api_.launchKernel(fn, plan.grid[0], plan.grid[1], plan.grid[2], plan.block_x, 1, 1,
                            plan.shared_bytes, currentStream(), params, nullptr),
          "cuLaunchKernel");
  }

  void waitUs(double us) override {
    if (!(us > 0)) return;
    if (spin_ == nullptr) {
      check(api_.moduleLoadData(&spin_module_, kSpinPtx), "cuModuleLoadData(spin PTX)");
      check(api_.moduleGetFunction(&spin_, spin_module_, "tracetwin_spin_ns"),
            "cuModuleGetFunction(tracetwin_spin_ns)");
    }
    uint64_t ns = static_cast<uint64_t>(us * 1e3);
    void* params[] = {&ns};
    check(api_.launchKernel(spin_, 1, 1, 1, 1, 1, 1, 0, currentStream(), params, nullptr),
          "cuLaunchKernel(tracetwin_spin_ns)");
  }

 private:
  struct Loaded {
    CUmodule module = nullptr;
    CUfunction function = nullptr;
  };

  CUstream currentStream() const { return static_cast<CUstream>(currentTorchCudaStream(index_)); }

  void check(CUresult status, const std::string& call) const {
    if (status == CUDA_SUCCESS) return;
    const char* name = "unknown error";
    if (api_.getErrorName) api_.getErrorName(status, &name);
    throw RuntimeFailure(fmt::format("{} failed on cuda:{}: {}", call, index_, name));
  }

  // Above 48 KiB a kernel's dynamic shared memory must be opted into, up to
  // what the device allows beside the kernel's static shared memory.
  void allowSharedMemory(CUfunction fn, const TritonBinary& binary) {
    constexpr int64_t kDefaultLimit = 48 * 1024;
    if (binary.shared_bytes <= kDefaultLimit) return;
    if (binary.shared_bytes > shared_optin_) {
      throw RuntimeFailure(fmt::format("{} needs {} bytes of shared memory; cuda:{} allows {}",
                                       binary.name, binary.shared_bytes, index_, shared_optin_));
    }
    int static_bytes = 0;
    check(api_.funcGetAttribute(&static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn),
          "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
    check(api_.funcSetCacheConfig(fn, CU_FUNC_CACHE_PREFER_SHARED), "cuFuncSetCacheConfig");
    check(api_.funcSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                shared_optin_ - static_bytes),
          "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  }

  int index_;
  DriverApi api_;
  CUdevice device_ = 0;
  int shared_optin_ = 0;
  std::map<std::string, Loaded> modules_;  // by cubin path
  CUmodule spin_module_ = nullptr;
  CUfunction spin_ = nullptr;
};

}  // namespace

std::unique_ptr<KernelDevice> makeCudaKernelDevice(int index) {
  return std::make_unique<CudaKernelDevice>(index);
}

}  // namespace tracetwin::replay::compiled
