//===- CublasLtApi.cpp - Loading libcublasLt ------------------------------===//
#include "cuda/CublasLtApi.h"

#include "Failure.h"

namespace encrt::rt::cuda {

const char *cublasStatusName(cublasStatus_t s) {
  switch (s) {
  case kCublasStatusSuccess: return "CUBLAS_STATUS_SUCCESS";
  case kCublasStatusNotInitialized: return "CUBLAS_STATUS_NOT_INITIALIZED";
  case kCublasStatusAllocFailed: return "CUBLAS_STATUS_ALLOC_FAILED";
  case kCublasStatusInvalidValue: return "CUBLAS_STATUS_INVALID_VALUE";
  case kCublasStatusArchMismatch: return "CUBLAS_STATUS_ARCH_MISMATCH";
  case kCublasStatusMappingError: return "CUBLAS_STATUS_MAPPING_ERROR";
  case kCublasStatusExecutionFailed: return "CUBLAS_STATUS_EXECUTION_FAILED";
  case kCublasStatusInternalError: return "CUBLAS_STATUS_INTERNAL_ERROR";
  case kCublasStatusNotSupported: return "CUBLAS_STATUS_NOT_SUPPORTED";
  case kCublasStatusLicenseError: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

bool CublasLt::load(std::string &why) {
  std::string errors;
  const char *opened = lib_.openFirst(
      {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11", "libcublasLt.so"}, errors);
  if (!opened) {
    why = "cuBLASLt not found (" + errors + ")";
    return false;
  }
  soname = opened;
  bool ok = true;
  auto sym = [&](auto &fn, const char *name, bool required = true) {
    if (!lib_.resolve(fn, name) && required && ok) {
      why = soname + " lacks " + name;
      ok = false;
    }
  };
  sym(cublasLtCreate, "cublasLtCreate");
  sym(cublasLtDestroy, "cublasLtDestroy");
  sym(cublasLtGetVersion, "cublasLtGetVersion");
  sym(cublasLtGetStatusString, "cublasLtGetStatusString", false);
  sym(cublasLtMatmulDescCreate, "cublasLtMatmulDescCreate");
  sym(cublasLtMatmulDescDestroy, "cublasLtMatmulDescDestroy");
  sym(cublasLtMatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute");
  sym(cublasLtMatrixLayoutCreate, "cublasLtMatrixLayoutCreate");
  sym(cublasLtMatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy");
  sym(cublasLtMatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate");
  sym(cublasLtMatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy");
  sym(cublasLtMatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute");
  sym(cublasLtMatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic");
  sym(cublasLtMatmulAlgoCheck, "cublasLtMatmulAlgoCheck");
  sym(cublasLtMatmul, "cublasLtMatmul");
  return ok;
}

const CublasLt *CublasLt::get(std::string &why) { return loadOnce<CublasLt>(why); }

void CublasLt::check(cublasStatus_t s, const char *call,
                     const std::string &detail) const {
  if (s == kCublasStatusSuccess)
    return;
  const char *text = cublasLtGetStatusString ? cublasLtGetStatusString(s) : nullptr;
  throw Failure(s == kCublasStatusAllocFailed ? ENCRT_OUT_OF_MEMORY : ENCRT_INTERNAL,
                formatCudaError(call, detail, cublasStatusName(s), text));
}

} // namespace encrt::rt::cuda
