//===- CudaApi.h - The CUDA driver API, loaded with dlopen ----------------===//
//
// The handful of driver types, constants and entry points the CUDA backend
// uses, declared here (no CUDA headers, no link-time dependency) and resolved
// from libcuda.so.1 at run time. The numeric values and signatures are copied
// from cuda.h; tests/runtime/CudaConstantsTest.cpp checks every one against
// the real header when the toolkit is installed.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_CUDA_CUDAAPI_H
#define ENCRT_CUDA_CUDAAPI_H

#include "cuda/SharedLibrary.h"

#include <cstddef>
#include <string>

namespace encrt::rt::cuda {

enum CUresult : int {
  kCuSuccess = 0,
  kCuErrorOutOfMemory = 2,
  kCuErrorNotInitialized = 3,
  kCuErrorStubLibrary = 34,
  kCuErrorNoDevice = 100,
  kCuErrorInvalidDevice = 101,
  kCuErrorNoBinaryForGpu = 209,
  kCuErrorNotFound = 500,
};
enum CUdevice_attribute : int {
  kCuAttrComputeCapabilityMajor = 75,
  kCuAttrComputeCapabilityMinor = 76,
  kCuAttrMaxSharedMemoryPerBlockOptin = 97,
};
enum CUfunction_attribute : int {
  kCuFuncAttrMaxDynamicSharedSizeBytes = 8,
};
enum CUstreamCaptureMode : int {
  kCuStreamCaptureModeThreadLocal = 1,
};
constexpr unsigned kCuStreamNonBlocking = 0x1;
constexpr unsigned kCuEventDefault = 0x0;
constexpr unsigned kCuMemHostAllocPortable = 0x01;

using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
struct CUgraph_st;
struct CUgraphExec_st;
using CUcontext = CUctx_st *;
using CUmodule = CUmod_st *;
using CUfunction = CUfunc_st *;
using CUstream = CUstream_st *;
using CUevent = CUevent_st *;
using CUgraph = CUgraph_st *;
using CUgraphExec = CUgraphExec_st *;

// Entry points, named after the exported symbol (the _v2 names cuda.h maps to).
using PFN_cuInit = CUresult (*)(unsigned int);
using PFN_cuDriverGetVersion = CUresult (*)(int *);
using PFN_cuDeviceGet = CUresult (*)(CUdevice *, int);
using PFN_cuDeviceGetCount = CUresult (*)(int *);
using PFN_cuDeviceGetName = CUresult (*)(char *, int, CUdevice);
using PFN_cuDeviceGetAttribute = CUresult (*)(int *, CUdevice_attribute, CUdevice);
using PFN_cuDevicePrimaryCtxRetain = CUresult (*)(CUcontext *, CUdevice);
using PFN_cuDevicePrimaryCtxRelease_v2 = CUresult (*)(CUdevice);
using PFN_cuCtxSetCurrent = CUresult (*)(CUcontext);
using PFN_cuModuleLoadData = CUresult (*)(CUmodule *, const void *);
using PFN_cuModuleUnload = CUresult (*)(CUmodule);
using PFN_cuModuleGetFunction = CUresult (*)(CUfunction *, CUmodule, const char *);
using PFN_cuFuncSetAttribute = CUresult (*)(CUfunction, CUfunction_attribute, int);
using PFN_cuLaunchKernel = CUresult (*)(CUfunction, unsigned int, unsigned int,
                                        unsigned int, unsigned int, unsigned int,
                                        unsigned int, unsigned int, CUstream,
                                        void **, void **);
using PFN_cuMemAlloc_v2 = CUresult (*)(CUdeviceptr *, size_t);
using PFN_cuMemFree_v2 = CUresult (*)(CUdeviceptr);
using PFN_cuMemHostAlloc = CUresult (*)(void **, size_t, unsigned int);
using PFN_cuMemFreeHost = CUresult (*)(void *);
using PFN_cuMemcpyHtoD_v2 = CUresult (*)(CUdeviceptr, const void *, size_t);
using PFN_cuMemcpyHtoDAsync_v2 = CUresult (*)(CUdeviceptr, const void *, size_t,
                                              CUstream);
using PFN_cuMemcpyDtoHAsync_v2 = CUresult (*)(void *, CUdeviceptr, size_t,
                                              CUstream);
using PFN_cuStreamCreate = CUresult (*)(CUstream *, unsigned int);
using PFN_cuStreamSynchronize = CUresult (*)(CUstream);
using PFN_cuStreamDestroy_v2 = CUresult (*)(CUstream);
using PFN_cuStreamBeginCapture_v2 = CUresult (*)(CUstream, CUstreamCaptureMode);
using PFN_cuStreamEndCapture = CUresult (*)(CUstream, CUgraph *);
using PFN_cuGraphInstantiateWithFlags = CUresult (*)(CUgraphExec *, CUgraph,
                                                     unsigned long long);
using PFN_cuGraphLaunch = CUresult (*)(CUgraphExec, CUstream);
using PFN_cuGraphExecDestroy = CUresult (*)(CUgraphExec);
using PFN_cuGraphDestroy = CUresult (*)(CUgraph);
using PFN_cuEventCreate = CUresult (*)(CUevent *, unsigned int);
using PFN_cuEventRecord = CUresult (*)(CUevent, CUstream);
using PFN_cuEventElapsedTime = CUresult (*)(float *, CUevent, CUevent);
using PFN_cuEventDestroy_v2 = CUresult (*)(CUevent);
using PFN_cuGetErrorName = CUresult (*)(CUresult, const char **);
using PFN_cuGetErrorString = CUresult (*)(CUresult, const char **);

/// "cuMemAlloc_v2(123456 bytes): CUDA_ERROR_OUT_OF_MEMORY: out of memory";
/// `detail` may be empty (then no parentheses' content: "call(): ...").
std::string formatCudaError(const char *call, const std::string &detail,
                            const char *name, const char *text);

/// libcuda.so.1, loaded and initialised once per process (thread-safe).
/// Never the toolkit's stub library: only the driver's soname is opened.
class CudaDriver {
public:
  /// The driver, or null with `why` set ("libcuda.so.1 not found (...)",
  /// "cuInit returned CUDA_ERROR_NO_DEVICE (...)").
  static const CudaDriver *get(std::string &why);

  /// Throws Failure (ENCRT_OUT_OF_MEMORY for out-of-memory errors, else
  /// ENCRT_INTERNAL) with formatCudaError's message unless `r` is success.
  void check(CUresult r, const char *call, const std::string &detail = {}) const;
  /// "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)".
  std::string describe(CUresult r) const;

  int deviceCount = 0;
  int driverVersion = 0;

  PFN_cuInit cuInit = nullptr;
  PFN_cuDriverGetVersion cuDriverGetVersion = nullptr;
  PFN_cuDeviceGet cuDeviceGet = nullptr;
  PFN_cuDeviceGetCount cuDeviceGetCount = nullptr;
  PFN_cuDeviceGetName cuDeviceGetName = nullptr;
  PFN_cuDeviceGetAttribute cuDeviceGetAttribute = nullptr;
  PFN_cuDevicePrimaryCtxRetain cuDevicePrimaryCtxRetain = nullptr;
  PFN_cuDevicePrimaryCtxRelease_v2 cuDevicePrimaryCtxRelease_v2 = nullptr;
  PFN_cuCtxSetCurrent cuCtxSetCurrent = nullptr;
  PFN_cuModuleLoadData cuModuleLoadData = nullptr;
  PFN_cuModuleUnload cuModuleUnload = nullptr;
  PFN_cuModuleGetFunction cuModuleGetFunction = nullptr;
  PFN_cuFuncSetAttribute cuFuncSetAttribute = nullptr;
  PFN_cuLaunchKernel cuLaunchKernel = nullptr;
  PFN_cuMemAlloc_v2 cuMemAlloc_v2 = nullptr;
  PFN_cuMemFree_v2 cuMemFree_v2 = nullptr;
  PFN_cuMemHostAlloc cuMemHostAlloc = nullptr;
  PFN_cuMemFreeHost cuMemFreeHost = nullptr;
  PFN_cuMemcpyHtoD_v2 cuMemcpyHtoD_v2 = nullptr;
  PFN_cuMemcpyHtoDAsync_v2 cuMemcpyHtoDAsync_v2 = nullptr;
  PFN_cuMemcpyDtoHAsync_v2 cuMemcpyDtoHAsync_v2 = nullptr;
  PFN_cuStreamCreate cuStreamCreate = nullptr;
  PFN_cuStreamSynchronize cuStreamSynchronize = nullptr;
  PFN_cuStreamDestroy_v2 cuStreamDestroy_v2 = nullptr;
  PFN_cuStreamBeginCapture_v2 cuStreamBeginCapture_v2 = nullptr;
  PFN_cuStreamEndCapture cuStreamEndCapture = nullptr;
  PFN_cuGraphInstantiateWithFlags cuGraphInstantiateWithFlags = nullptr;
  PFN_cuGraphLaunch cuGraphLaunch = nullptr;
  PFN_cuGraphExecDestroy cuGraphExecDestroy = nullptr;
  PFN_cuGraphDestroy cuGraphDestroy = nullptr;
  PFN_cuEventCreate cuEventCreate = nullptr;
  PFN_cuEventRecord cuEventRecord = nullptr;
  PFN_cuEventElapsedTime cuEventElapsedTime = nullptr;
  PFN_cuEventDestroy_v2 cuEventDestroy_v2 = nullptr;
  PFN_cuGetErrorName cuGetErrorName = nullptr;
  PFN_cuGetErrorString cuGetErrorString = nullptr;

private:
  template <typename Lib> friend const Lib *loadOnce(std::string &why);
  CudaDriver() = default;
  bool load(std::string &why);
  SharedLibrary lib_;
};

} // namespace encrt::rt::cuda

#endif // ENCRT_CUDA_CUDAAPI_H
