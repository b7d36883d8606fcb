//===- CublasLtApi.cpp - Loading libcublasLt ------------------------------===//
#include "cuda/CublasLtApi.h"

#include "Failure.h"

#include <dlfcn.h>
#include <mutex>
#include <type_traits>

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
  const char *names[] = {"libcublasLt.so.13", "libcublasLt.so.12",
                         "libcublasLt.so.11", "libcublasLt.so"};
  std::string errors;
  for (const char *name : names) {
    handle_ = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle_) {
      soname = name;
      break;
    }
    const char *e = dlerror();
    errors += std::string(errors.empty() ? "" : "; ") + (e ? e : name);
  }
  if (!handle_) {
    why = "cuBLASLt not found (" + errors + ")";
    return false;
  }
  bool ok = true;
  auto sym = [&](auto &fn, const char *name, bool required = true) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle_, name));
    if (!fn && required && ok) {
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
  sym(cublasLtMatmul, "cublasLtMatmul");
  return ok;
}

const CublasLt *CublasLt::get(std::string &why) {
  static std::once_flag once;
  static CublasLt *lib = nullptr;
  static std::string error;
  std::call_once(once, [] {
    auto *l = new CublasLt();
    if (l->load(error)) {
      lib = l; // lives for the process
    } else {
      if (l->handle_)
        dlclose(l->handle_);
      delete l;
    }
  });
  if (!lib)
    why = error;
  return lib;
}

void CublasLt::check(cublasStatus_t s, const char *call,
                     const std::string &detail) const {
  if (s == kCublasStatusSuccess)
    return;
  const char *text = cublasLtGetStatusString ? cublasLtGetStatusString(s) : nullptr;
  throw Failure(s == kCublasStatusAllocFailed ? ENCRT_OUT_OF_MEMORY : ENCRT_INTERNAL,
                formatCudaError(call, detail, cublasStatusName(s), text));
}

} // namespace encrt::rt::cuda
