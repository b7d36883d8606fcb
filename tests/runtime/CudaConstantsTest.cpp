//===- CudaConstantsTest.cpp - Our CUDA declarations vs the real headers --===//
//
// Built only where the CUDA toolkit's headers are installed. Every numeric
// value copied into runtime/src/cuda/{CudaApi,CublasLtApi}.h is checked with
// static_assert against cuda.h / cublasLt.h / cublas_api.h /
// library_types.h, and every entry point's type against the real
// declaration (our types mapped to theirs), so a wrong parameter type or
// order fails to compile. The runtime itself never includes these headers.
//
//===----------------------------------------------------------------------===//
#include "cuda/CublasLtApi.h"
#include "cuda/CudaApi.h"

#include <cublasLt.h>
#include <cuda.h>

#include <cstddef>
#include <cstdio>
#include <type_traits>

namespace ours = encrt::rt::cuda;

// Our type -> the real type.
template <typename T> struct Real { using type = T; };
template <typename T> using RealT = typename Real<T>::type;
template <typename T> struct Real<T *> { using type = RealT<T> *; };
template <typename T> struct Real<const T> { using type = const RealT<T>; };
template <typename T> struct Real<T[]> { using type = RealT<T>[]; };
template <typename R, typename... A> struct Real<R (*)(A...)> {
  using type = RealT<R> (*)(RealT<A>...);
};
#define MAP(OURS, THEIRS)                                                      \
  template <> struct Real<OURS> { using type = THEIRS; }
MAP(ours::CUresult, ::CUresult);
MAP(ours::CUdevice_attribute, ::CUdevice_attribute);
MAP(ours::CUfunction_attribute, ::CUfunction_attribute);
MAP(ours::CUstreamCaptureMode, ::CUstreamCaptureMode);
MAP(ours::CUctx_st, ::CUctx_st);
MAP(ours::CUmod_st, ::CUmod_st);
MAP(ours::CUfunc_st, ::CUfunc_st);
MAP(ours::CUstream_st, ::CUstream_st);
MAP(ours::CUevent_st, ::CUevent_st);
MAP(ours::CUgraph_st, ::CUgraph_st);
MAP(ours::CUgraphExec_st, ::CUgraphExec_st);
MAP(ours::cublasStatus_t, ::cublasStatus_t);
MAP(ours::cublasComputeType_t, ::cublasComputeType_t);
MAP(ours::cudaDataType_t, ::cudaDataType_t);
MAP(ours::cublasLtMatmulDescAttributes_t, ::cublasLtMatmulDescAttributes_t);
MAP(ours::cublasLtMatmulPreferenceAttributes_t, ::cublasLtMatmulPreferenceAttributes_t);
MAP(ours::cublasLtContext, ::cublasLtContext);
MAP(ours::cublasLtMatmulDescOpaque, ::cublasLtMatmulDescOpaque_t);
MAP(ours::cublasLtMatrixLayoutOpaque, ::cublasLtMatrixLayoutOpaque_t);
MAP(ours::cublasLtMatmulPreferenceOpaque, ::cublasLtMatmulPreferenceOpaque_t);
MAP(ours::cublasLtMatmulAlgo_t, ::cublasLtMatmulAlgo_t);
MAP(ours::cublasLtMatmulHeuristicResult_t, ::cublasLtMatmulHeuristicResult_t);
#undef MAP

#define SAME_VALUE(OURS, THEIRS)                                               \
  static_assert(static_cast<long long>(ours::OURS) ==                         \
                    static_cast<long long>(THEIRS),                            \
                #OURS " differs from " #THEIRS)
#define SAME_SIGNATURE(NAME, REAL)                                             \
  static_assert(std::is_same_v<RealT<ours::PFN_##NAME>, decltype(&::REAL)>,  \
                "PFN_" #NAME " differs from " #REAL)

// cuda.h
SAME_VALUE(kCuSuccess, CUDA_SUCCESS);
SAME_VALUE(kCuErrorOutOfMemory, CUDA_ERROR_OUT_OF_MEMORY);
SAME_VALUE(kCuErrorNotInitialized, CUDA_ERROR_NOT_INITIALIZED);
SAME_VALUE(kCuErrorStubLibrary, CUDA_ERROR_STUB_LIBRARY);
SAME_VALUE(kCuErrorNoDevice, CUDA_ERROR_NO_DEVICE);
SAME_VALUE(kCuErrorInvalidDevice, CUDA_ERROR_INVALID_DEVICE);
SAME_VALUE(kCuErrorNoBinaryForGpu, CUDA_ERROR_NO_BINARY_FOR_GPU);
SAME_VALUE(kCuErrorNotFound, CUDA_ERROR_NOT_FOUND);
SAME_VALUE(kCuAttrComputeCapabilityMajor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
SAME_VALUE(kCuAttrComputeCapabilityMinor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
SAME_VALUE(kCuAttrMaxSharedMemoryPerBlockOptin,
           CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
SAME_VALUE(kCuFuncAttrMaxDynamicSharedSizeBytes,
           CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
SAME_VALUE(kCuStreamCaptureModeThreadLocal, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
SAME_VALUE(kCuStreamNonBlocking, CU_STREAM_NON_BLOCKING);
SAME_VALUE(kCuEventDefault, CU_EVENT_DEFAULT);
SAME_VALUE(kCuMemHostAllocPortable, CU_MEMHOSTALLOC_PORTABLE);
static_assert(std::is_same_v<ours::CUdevice, ::CUdevice>);
static_assert(std::is_same_v<ours::CUdeviceptr, ::CUdeviceptr>);
static_assert(sizeof(ours::CUresult) == sizeof(::CUresult));
static_assert(sizeof(ours::CUdevice_attribute) == sizeof(::CUdevice_attribute));
static_assert(sizeof(ours::CUstreamCaptureMode) == sizeof(::CUstreamCaptureMode));

SAME_SIGNATURE(cuInit, cuInit);
SAME_SIGNATURE(cuDriverGetVersion, cuDriverGetVersion);
SAME_SIGNATURE(cuDeviceGet, cuDeviceGet);
SAME_SIGNATURE(cuDeviceGetCount, cuDeviceGetCount);
SAME_SIGNATURE(cuDeviceGetName, cuDeviceGetName);
SAME_SIGNATURE(cuDeviceGetAttribute, cuDeviceGetAttribute);
SAME_SIGNATURE(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain);
SAME_SIGNATURE(cuDevicePrimaryCtxRelease_v2, cuDevicePrimaryCtxRelease_v2);
SAME_SIGNATURE(cuCtxSetCurrent, cuCtxSetCurrent);
SAME_SIGNATURE(cuModuleLoadData, cuModuleLoadData);
SAME_SIGNATURE(cuModuleUnload, cuModuleUnload);
SAME_SIGNATURE(cuModuleGetFunction, cuModuleGetFunction);
SAME_SIGNATURE(cuFuncSetAttribute, cuFuncSetAttribute);
SAME_SIGNATURE(cuLaunchKernel, cuLaunchKernel);
SAME_SIGNATURE(cuMemAlloc_v2, cuMemAlloc_v2);
SAME_SIGNATURE(cuMemFree_v2, cuMemFree_v2);
SAME_SIGNATURE(cuMemHostAlloc, cuMemHostAlloc);
SAME_SIGNATURE(cuMemFreeHost, cuMemFreeHost);
SAME_SIGNATURE(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2);
SAME_SIGNATURE(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2);
SAME_SIGNATURE(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2);
SAME_SIGNATURE(cuStreamCreate, cuStreamCreate);
SAME_SIGNATURE(cuStreamSynchronize, cuStreamSynchronize);
SAME_SIGNATURE(cuStreamDestroy_v2, cuStreamDestroy_v2);
SAME_SIGNATURE(cuStreamBeginCapture_v2, cuStreamBeginCapture_v2);
SAME_SIGNATURE(cuStreamEndCapture, cuStreamEndCapture);
SAME_SIGNATURE(cuGraphInstantiateWithFlags, cuGraphInstantiateWithFlags);
SAME_SIGNATURE(cuGraphLaunch, cuGraphLaunch);
SAME_SIGNATURE(cuGraphExecDestroy, cuGraphExecDestroy);
SAME_SIGNATURE(cuGraphDestroy, cuGraphDestroy);
SAME_SIGNATURE(cuEventCreate, cuEventCreate);
SAME_SIGNATURE(cuEventRecord, cuEventRecord);
// We resolve the original symbol; cuda.h maps the name to _v2 (same type).
SAME_SIGNATURE(cuEventElapsedTime, cuEventElapsedTime_v2);
SAME_SIGNATURE(cuEventDestroy_v2, cuEventDestroy_v2);
SAME_SIGNATURE(cuGetErrorName, cuGetErrorName);
SAME_SIGNATURE(cuGetErrorString, cuGetErrorString);

// cublas_api.h, library_types.h, cublasLt.h
SAME_VALUE(kCublasStatusSuccess, CUBLAS_STATUS_SUCCESS);
SAME_VALUE(kCublasStatusNotInitialized, CUBLAS_STATUS_NOT_INITIALIZED);
SAME_VALUE(kCublasStatusAllocFailed, CUBLAS_STATUS_ALLOC_FAILED);
SAME_VALUE(kCublasStatusInvalidValue, CUBLAS_STATUS_INVALID_VALUE);
SAME_VALUE(kCublasStatusArchMismatch, CUBLAS_STATUS_ARCH_MISMATCH);
SAME_VALUE(kCublasStatusMappingError, CUBLAS_STATUS_MAPPING_ERROR);
SAME_VALUE(kCublasStatusExecutionFailed, CUBLAS_STATUS_EXECUTION_FAILED);
SAME_VALUE(kCublasStatusInternalError, CUBLAS_STATUS_INTERNAL_ERROR);
SAME_VALUE(kCublasStatusNotSupported, CUBLAS_STATUS_NOT_SUPPORTED);
SAME_VALUE(kCublasStatusLicenseError, CUBLAS_STATUS_LICENSE_ERROR);
SAME_VALUE(kCublasOpN, CUBLAS_OP_N);
SAME_VALUE(kCublasOpT, CUBLAS_OP_T);
SAME_VALUE(kCublasCompute32F, CUBLAS_COMPUTE_32F);
SAME_VALUE(kCublasCompute32I, CUBLAS_COMPUTE_32I);
SAME_VALUE(kCudaR32F, CUDA_R_32F);
SAME_VALUE(kCudaR16F, CUDA_R_16F);
SAME_VALUE(kCudaR8I, CUDA_R_8I);
SAME_VALUE(kCudaR32I, CUDA_R_32I);
SAME_VALUE(kCudaR16BF, CUDA_R_16BF);
SAME_VALUE(kLtDescTransA, CUBLASLT_MATMUL_DESC_TRANSA);
SAME_VALUE(kLtDescTransB, CUBLASLT_MATMUL_DESC_TRANSB);
SAME_VALUE(kLtDescEpilogue, CUBLASLT_MATMUL_DESC_EPILOGUE);
SAME_VALUE(kLtDescBiasPointer, CUBLASLT_MATMUL_DESC_BIAS_POINTER);
SAME_VALUE(kLtDescBiasDataType, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE);
SAME_VALUE(kLtEpilogueDefault, CUBLASLT_EPILOGUE_DEFAULT);
SAME_VALUE(kLtEpilogueBias, CUBLASLT_EPILOGUE_BIAS);
SAME_VALUE(kLtEpilogueGeluBias, CUBLASLT_EPILOGUE_GELU_BIAS);
SAME_VALUE(kLtPrefMaxWorkspaceBytes, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
static_assert(sizeof(ours::cublasStatus_t) == sizeof(::cublasStatus_t));
static_assert(sizeof(ours::cudaDataType_t) == sizeof(::cudaDataType_t));
// The attribute values we pass: TRANSA/B are int32 (cublasOperation_t),
// EPILOGUE uint32 (cublasLtEpilogue_t), MAX_WORKSPACE_BYTES uint64.
static_assert(sizeof(::cublasOperation_t) == sizeof(int32_t));
static_assert(sizeof(::cublasLtEpilogue_t) == sizeof(uint32_t));

// The structures we allocate ourselves must match byte for byte.
using OurHeur = ours::cublasLtMatmulHeuristicResult_t;
using RealHeur = ::cublasLtMatmulHeuristicResult_t;
static_assert(sizeof(ours::cublasLtMatmulAlgo_t) == sizeof(::cublasLtMatmulAlgo_t));
static_assert(sizeof(OurHeur) == sizeof(RealHeur));
static_assert(offsetof(OurHeur, algo) == offsetof(RealHeur, algo));
static_assert(offsetof(OurHeur, workspaceSize) == offsetof(RealHeur, workspaceSize));
static_assert(offsetof(OurHeur, state) == offsetof(RealHeur, state));
static_assert(offsetof(OurHeur, wavesCount) == offsetof(RealHeur, wavesCount));
static_assert(offsetof(OurHeur, reserved) == offsetof(RealHeur, reserved));

SAME_SIGNATURE(cublasLtCreate, cublasLtCreate);
SAME_SIGNATURE(cublasLtDestroy, cublasLtDestroy);
SAME_SIGNATURE(cublasLtGetVersion, cublasLtGetVersion);
SAME_SIGNATURE(cublasLtGetStatusName, cublasLtGetStatusName);
SAME_SIGNATURE(cublasLtGetStatusString, cublasLtGetStatusString);
SAME_SIGNATURE(cublasLtMatmulDescCreate, cublasLtMatmulDescCreate);
SAME_SIGNATURE(cublasLtMatmulDescDestroy, cublasLtMatmulDescDestroy);
SAME_SIGNATURE(cublasLtMatmulDescSetAttribute, cublasLtMatmulDescSetAttribute);
SAME_SIGNATURE(cublasLtMatrixLayoutCreate, cublasLtMatrixLayoutCreate);
SAME_SIGNATURE(cublasLtMatrixLayoutDestroy, cublasLtMatrixLayoutDestroy);
SAME_SIGNATURE(cublasLtMatmulPreferenceCreate, cublasLtMatmulPreferenceCreate);
SAME_SIGNATURE(cublasLtMatmulPreferenceDestroy, cublasLtMatmulPreferenceDestroy);
SAME_SIGNATURE(cublasLtMatmulPreferenceSetAttribute, cublasLtMatmulPreferenceSetAttribute);
SAME_SIGNATURE(cublasLtMatmulAlgoGetHeuristic, cublasLtMatmulAlgoGetHeuristic);
SAME_SIGNATURE(cublasLtMatmul, cublasLtMatmul);

int main() {
  std::puts("CUDA declarations match the toolkit headers (checked at compile time)");
  return 0;
}
