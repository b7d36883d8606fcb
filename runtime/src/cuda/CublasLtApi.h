//===- CublasLtApi.h - cuBLASLt, loaded with dlopen -----------------------===//
//
// The cuBLASLt types, constants and entry points the GEMM steps use,
// declared here (no CUDA headers, no link-time dependency) and resolved from
// libcublasLt.so.{13,12,11} or libcublasLt.so at run time. Values and
// signatures are copied from cublasLt.h, cublas_api.h and library_types.h;
// tests/runtime/CudaConstantsTest.cpp checks them against the real headers.
//
//===----------------------------------------------------------------------===//
#ifndef ENCRT_CUDA_CUBLASLTAPI_H
#define ENCRT_CUDA_CUBLASLTAPI_H

#include "cuda/CudaApi.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace encrt::rt::cuda {

enum cublasStatus_t : int {
  kCublasStatusSuccess = 0,
  kCublasStatusNotInitialized = 1,
  kCublasStatusAllocFailed = 3,
  kCublasStatusInvalidValue = 7,
  kCublasStatusArchMismatch = 8,
  kCublasStatusMappingError = 11,
  kCublasStatusExecutionFailed = 13,
  kCublasStatusInternalError = 14,
  kCublasStatusNotSupported = 15,
  kCublasStatusLicenseError = 16,
};
enum cublasOperation_t : int { kCublasOpN = 0, kCublasOpT = 1 };
enum cublasComputeType_t : int {
  kCublasCompute32F = 68,
  kCublasCompute32I = 72,
};
enum cudaDataType_t : int {
  kCudaR32F = 0,
  kCudaR16F = 2,
  kCudaR8I = 3,
  kCudaR32I = 10,
  kCudaR16BF = 14,
};
enum cublasLtMatmulDescAttributes_t : int {
  kLtDescTransA = 3,
  kLtDescTransB = 4,
  kLtDescEpilogue = 7,
  kLtDescBiasPointer = 8,
  kLtDescBiasDataType = 26,
};
enum cublasLtEpilogue_t : int {
  kLtEpilogueDefault = 1,
  kLtEpilogueBias = 4,
  kLtEpilogueGeluBias = 36,
};
enum cublasLtMatmulPreferenceAttributes_t : int {
  kLtPrefMaxWorkspaceBytes = 1,
};

struct cublasLtContext;
struct cublasLtMatmulDescOpaque;
struct cublasLtMatrixLayoutOpaque;
struct cublasLtMatmulPreferenceOpaque;
using cublasLtHandle_t = cublasLtContext *;
using cublasLtMatmulDesc_t = cublasLtMatmulDescOpaque *;
using cublasLtMatrixLayout_t = cublasLtMatrixLayoutOpaque *;
using cublasLtMatmulPreference_t = cublasLtMatmulPreferenceOpaque *;

struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};
struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};

using PFN_cublasLtCreate = cublasStatus_t (*)(cublasLtHandle_t *);
using PFN_cublasLtDestroy = cublasStatus_t (*)(cublasLtHandle_t);
using PFN_cublasLtGetVersion = size_t (*)();
using PFN_cublasLtGetStatusName = const char *(*)(cublasStatus_t);
using PFN_cublasLtGetStatusString = const char *(*)(cublasStatus_t);
using PFN_cublasLtMatmulDescCreate = cublasStatus_t (*)(cublasLtMatmulDesc_t *,
                                                        cublasComputeType_t,
                                                        cudaDataType_t);
using PFN_cublasLtMatmulDescDestroy = cublasStatus_t (*)(cublasLtMatmulDesc_t);
using PFN_cublasLtMatmulDescSetAttribute = cublasStatus_t (*)(
    cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void *, size_t);
using PFN_cublasLtMatrixLayoutCreate = cublasStatus_t (*)(
    cublasLtMatrixLayout_t *, cudaDataType_t, uint64_t, uint64_t, int64_t);
using PFN_cublasLtMatrixLayoutDestroy = cublasStatus_t (*)(cublasLtMatrixLayout_t);
using PFN_cublasLtMatmulPreferenceCreate = cublasStatus_t (*)(cublasLtMatmulPreference_t *);
using PFN_cublasLtMatmulPreferenceDestroy = cublasStatus_t (*)(cublasLtMatmulPreference_t);
using PFN_cublasLtMatmulPreferenceSetAttribute = cublasStatus_t (*)(
    cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t,
    const void *, size_t);
using PFN_cublasLtMatmulAlgoGetHeuristic = cublasStatus_t (*)(
    cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
    cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
    cublasLtMatmulPreference_t, int, cublasLtMatmulHeuristicResult_t[], int *);
using PFN_cublasLtMatmulAlgoCheck = cublasStatus_t (*)(
    cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
    cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t *,
    cublasLtMatmulHeuristicResult_t *);
using PFN_cublasLtMatmul = cublasStatus_t (*)(
    cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *,
    cublasLtMatrixLayout_t, const void *, cublasLtMatrixLayout_t, const void *,
    const void *, cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
    const cublasLtMatmulAlgo_t *, void *, size_t, CUstream);

/// "CUBLAS_STATUS_NOT_SUPPORTED" for the values above, else "CUBLAS_STATUS_<n>".
const char *cublasStatusName(cublasStatus_t s);

/// libcublasLt, loaded once per process (thread-safe).
class CublasLt {
public:
  /// The library, or null with `why` set.
  static const CublasLt *get(std::string &why);

  /// Throws Failure ("cublasLtMatmul(N=384 K=384 T=12): CUBLAS_STATUS_...:
  /// ...") unless `s` is success.
  void check(cublasStatus_t s, const char *call, const std::string &detail = {}) const;

  std::string soname;
  PFN_cublasLtCreate cublasLtCreate = nullptr;
  PFN_cublasLtDestroy cublasLtDestroy = nullptr;
  PFN_cublasLtGetVersion cublasLtGetVersion = nullptr;
  PFN_cublasLtGetStatusString cublasLtGetStatusString = nullptr; ///< may be null
  PFN_cublasLtMatmulDescCreate cublasLtMatmulDescCreate = nullptr;
  PFN_cublasLtMatmulDescDestroy cublasLtMatmulDescDestroy = nullptr;
  PFN_cublasLtMatmulDescSetAttribute cublasLtMatmulDescSetAttribute = nullptr;
  PFN_cublasLtMatrixLayoutCreate cublasLtMatrixLayoutCreate = nullptr;
  PFN_cublasLtMatrixLayoutDestroy cublasLtMatrixLayoutDestroy = nullptr;
  PFN_cublasLtMatmulPreferenceCreate cublasLtMatmulPreferenceCreate = nullptr;
  PFN_cublasLtMatmulPreferenceDestroy cublasLtMatmulPreferenceDestroy = nullptr;
  PFN_cublasLtMatmulPreferenceSetAttribute cublasLtMatmulPreferenceSetAttribute = nullptr;
  PFN_cublasLtMatmulAlgoGetHeuristic cublasLtMatmulAlgoGetHeuristic = nullptr;
  PFN_cublasLtMatmulAlgoCheck cublasLtMatmulAlgoCheck = nullptr;
  PFN_cublasLtMatmul cublasLtMatmul = nullptr;

private:
  template <typename Lib> friend const Lib *loadOnce(std::string &why);
  CublasLt() = default;
  bool load(std::string &why);
  SharedLibrary lib_;
};

} // namespace encrt::rt::cuda

#endif // ENCRT_CUDA_CUBLASLTAPI_H
