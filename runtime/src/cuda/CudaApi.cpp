//===- CudaApi.cpp - Loading libcuda.so.1 ---------------------------------===//
#include "cuda/CudaApi.h"

#include "Failure.h"

namespace encrt::rt::cuda {

std::string formatCudaError(const char *call, const std::string &detail,
                            const char *name, const char *text) {
  std::string s = std::string(call) + "(" + detail + "): " +
                  (name ? name : "CUDA_ERROR_UNKNOWN");
  if (text && *text)
    s += std::string(": ") + text;
  return s;
}

bool CudaDriver::load(std::string &why) {
  // The driver's soname only: the toolkit's stubs/libcuda.so must never load.
  std::string errors;
  if (!lib_.openFirst({"libcuda.so.1"}, errors)) {
    why = "libcuda.so.1 not found (" + errors + ")";
    return false;
  }
  bool ok = true;
  auto sym = [&](auto &fn, const char *name) {
    if (!lib_.resolve(fn, name) && ok) {
      why = std::string("libcuda.so.1 lacks ") + name + " (driver too old)";
      ok = false;
    }
  };
  sym(cuInit, "cuInit");
  sym(cuDriverGetVersion, "cuDriverGetVersion");
  sym(cuDeviceGet, "cuDeviceGet");
  sym(cuDeviceGetCount, "cuDeviceGetCount");
  sym(cuDeviceGetName, "cuDeviceGetName");
  sym(cuDeviceGetAttribute, "cuDeviceGetAttribute");
  sym(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  sym(cuDevicePrimaryCtxRelease_v2, "cuDevicePrimaryCtxRelease_v2");
  sym(cuCtxSetCurrent, "cuCtxSetCurrent");
  sym(cuModuleLoadData, "cuModuleLoadData");
  sym(cuModuleUnload, "cuModuleUnload");
  sym(cuModuleGetFunction, "cuModuleGetFunction");
  sym(cuFuncSetAttribute, "cuFuncSetAttribute");
  sym(cuLaunchKernel, "cuLaunchKernel");
  sym(cuMemAlloc_v2, "cuMemAlloc_v2");
  sym(cuMemFree_v2, "cuMemFree_v2");
  sym(cuMemHostAlloc, "cuMemHostAlloc");
  sym(cuMemFreeHost, "cuMemFreeHost");
  sym(cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2");
  sym(cuMemcpyHtoDAsync_v2, "cuMemcpyHtoDAsync_v2");
  sym(cuMemcpyDtoHAsync_v2, "cuMemcpyDtoHAsync_v2");
  sym(cuStreamCreate, "cuStreamCreate");
  sym(cuStreamSynchronize, "cuStreamSynchronize");
  sym(cuStreamDestroy_v2, "cuStreamDestroy_v2");
  sym(cuStreamBeginCapture_v2, "cuStreamBeginCapture_v2");
  sym(cuStreamEndCapture, "cuStreamEndCapture");
  sym(cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
  sym(cuGraphLaunch, "cuGraphLaunch");
  sym(cuGraphExecDestroy, "cuGraphExecDestroy");
  sym(cuGraphDestroy, "cuGraphDestroy");
  sym(cuEventCreate, "cuEventCreate");
  sym(cuEventRecord, "cuEventRecord");
  // The original symbol (same signature as cuda.h's cuEventElapsedTime_v2);
  // every driver exports it.
  sym(cuEventElapsedTime, "cuEventElapsedTime");
  sym(cuEventDestroy_v2, "cuEventDestroy_v2");
  sym(cuGetErrorName, "cuGetErrorName");
  sym(cuGetErrorString, "cuGetErrorString");
  if (!ok)
    return false;

  CUresult r = cuInit(0);
  if (r != kCuSuccess) {
    why = "cuInit returned " + describe(r);
    return false;
  }
  if (cuDriverGetVersion(&driverVersion) != kCuSuccess)
    driverVersion = 0;
  r = cuDeviceGetCount(&deviceCount);
  if (r != kCuSuccess) {
    why = "cuDeviceGetCount returned " + describe(r);
    return false;
  }
  if (deviceCount <= 0) {
    why = "the driver reports 0 devices";
    return false;
  }
  return true;
}

const CudaDriver *CudaDriver::get(std::string &why) { return loadOnce<CudaDriver>(why); }

std::string CudaDriver::describe(CUresult r) const {
  const char *name = nullptr, *text = nullptr;
  if (!cuGetErrorName || cuGetErrorName(r, &name) != kCuSuccess)
    name = nullptr;
  if (!cuGetErrorString || cuGetErrorString(r, &text) != kCuSuccess)
    text = nullptr;
  std::string s = name ? name : "CUDA error " + std::to_string(static_cast<int>(r));
  if (text && *text)
    s += std::string(" (") + text + ")";
  return s;
}

void CudaDriver::check(CUresult r, const char *call,
                       const std::string &detail) const {
  if (r == kCuSuccess)
    return;
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName(r, &name) != kCuSuccess)
    name = nullptr;
  if (cuGetErrorString(r, &text) != kCuSuccess)
    text = nullptr;
  std::string fallback = "CUDA error " + std::to_string(static_cast<int>(r));
  throw Failure(r == kCuErrorOutOfMemory ? ENCRT_OUT_OF_MEMORY : ENCRT_INTERNAL,
                formatCudaError(call, detail, name ? name : fallback.c_str(), text));
}

} // namespace encrt::rt::cuda
