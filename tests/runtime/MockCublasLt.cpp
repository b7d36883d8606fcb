//===- MockCublasLt.cpp - A host-only libcublasLt for the CUDA tests ------===//
//
// Test double of cuBLASLt (built as libcublasLt.so.13 next to the mock
// libcuda.so.1): int8 GEMMs (CUBLAS_COMPUTE_32I, i8 x i8 -> i32) and fp16
// GEMMs (CUBLAS_COMPUTE_32F, f32 scale, f16 in and out, epilogue none / bias
// / bias + tanh GELU), only in the layout the runtime's contract prescribes
// (A = W with TRANSA = T, lda = K; B = X with TRANSB = N, ldb = K; C = D,
// ldc = N); anything else is CUBLAS_STATUS_NOT_SUPPORTED, so a wrong
// descriptor fails the test.
// Matmuls go onto the mock driver's stream (recorded while it captures).
//
//===----------------------------------------------------------------------===//
#include "encrt/float16.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <functional>

namespace {

constexpr int kOk = 0, kInvalid = 7, kNotSupported = 15;

struct Desc {
  int compute, scale, transa = 0, transb = 0;
  uint32_t epilogue = 1;
  const void *bias = nullptr;
};
struct Layout {
  int type;
  uint64_t rows, cols;
  int64_t ld;
};

using EnqueueFn = void (*)(void *, std::function<void()> *);

/// What the tests read through mock_cublaslt_stats().
struct LtStats {
  long heuristicCalls, heuristicRequested, matmuls;
};
LtStats ltStats;

} // namespace

extern "C" {

__attribute__((visibility("default"))) const LtStats *mock_cublaslt_stats() { return &ltStats; }

int cublasLtCreate(void **h) { *h = new int(1); return kOk; }
int cublasLtDestroy(void *h) { delete static_cast<int *>(h); return kOk; }
size_t cublasLtGetVersion() { return 130000; }
const char *cublasLtGetStatusString(int s) { return s == kNotSupported ? "the functionality requested is not supported" : "mock status"; }
int cublasLtMatmulDescCreate(void **d, int compute, int scale) {
  *d = new Desc{compute, scale};
  return kOk;
}
int cublasLtMatmulDescDestroy(void *d) { delete static_cast<Desc *>(d); return kOk; }
int cublasLtMatmulDescSetAttribute(void *d, int attr, const void *buf, size_t n) {
  auto *desc = static_cast<Desc *>(d);
  if (attr == 8 && n == sizeof(void *)) {
    std::memcpy(&desc->bias, buf, n);
    return kOk;
  }
  if (n != 4)
    return kInvalid;
  if (attr == 3) std::memcpy(&desc->transa, buf, 4);
  else if (attr == 4) std::memcpy(&desc->transb, buf, 4);
  else if (attr == 7) std::memcpy(&desc->epilogue, buf, 4);
  else return kInvalid;
  return kOk;
}
int cublasLtMatrixLayoutCreate(void **l, int type, uint64_t rows, uint64_t cols, int64_t ld) {
  *l = new Layout{type, rows, cols, ld};
  return kOk;
}
int cublasLtMatrixLayoutDestroy(void *l) { delete static_cast<Layout *>(l); return kOk; }
int cublasLtMatmulPreferenceCreate(void **p) { *p = new uint64_t(0); return kOk; }
int cublasLtMatmulPreferenceDestroy(void *p) { delete static_cast<uint64_t *>(p); return kOk; }
int cublasLtMatmulPreferenceSetAttribute(void *p, int attr, const void *buf, size_t n) {
  if (attr != 1 || n != 8)
    return kInvalid;
  std::memcpy(p, buf, 8);
  return kOk;
}

static bool isInt8(const Desc &d) { return d.compute == 72; }

static bool supported(const Desc &d, const Layout &a, const Layout &b, const Layout &c) {
  // int8: CUBLAS_COMPUTE_32I, scale CUDA_R_32I, A/B CUDA_R_8I, C CUDA_R_32I;
  // fp16: CUBLAS_COMPUTE_32F, scale CUDA_R_32F, A/B/C CUDA_R_16F; TN.
  bool types = isInt8(d) ? d.scale == 10 && d.epilogue == 1 && a.type == 3 &&
                               b.type == 3 && c.type == 10 && a.rows % 4 == 0
                         : d.compute == 68 && d.scale == 0 && a.type == 2 &&
                               b.type == 2 && c.type == 2 &&
                               (d.epilogue == 1 || ((d.epilogue == 4 || d.epilogue == 36) && d.bias));
  return types && d.transa == 1 && d.transb == 0 &&
         a.rows == b.rows && a.ld == static_cast<int64_t>(a.rows) &&
         b.ld == static_cast<int64_t>(b.rows) && c.rows == a.cols &&
         c.cols == b.cols && c.ld == static_cast<int64_t>(c.rows);
}

int cublasLtMatmulAlgoGetHeuristic(void *, void *d, void *a, void *b, void *c, void *dd,
                                   void *, int requested, void *results, int *count) {
  if (requested < 1 || c != dd)
    return kInvalid;
  ++ltStats.heuristicCalls;
  ltStats.heuristicRequested = requested;
  *count = 0;
  if (!supported(*static_cast<Desc *>(d), *static_cast<Layout *>(a),
                 *static_cast<Layout *>(b), *static_cast<Layout *>(c)))
    return kNotSupported;
  // Up to three "algorithms" (their first word tells them apart), so the
  // runtime's tuning path runs.
  const int n = requested < 3 ? requested : 3;
  std::memset(results, 0, 96 * static_cast<size_t>(n)); // sizeof(cublasLtMatmulHeuristicResult_t)
  for (int i = 0; i < n; ++i)
    std::memcpy(static_cast<char *>(results) + 96 * i, &i, sizeof i);
  *count = n;
  return kOk;
}

int cublasLtMatmulAlgoCheck(void *, void *d, void *a, void *b, void *c, void *dd, const void *algo,
                            void *result) {
  if (!algo || !result || c != dd)
    return kInvalid;
  std::memset(result, 0, 96);
  return supported(*static_cast<Desc *>(d), *static_cast<Layout *>(a), *static_cast<Layout *>(b),
                   *static_cast<Layout *>(c))
             ? kOk
             : kNotSupported;
}

int cublasLtMatmul(void *, void *d, const void *alpha, const void *A, void *ad,
                   const void *B, void *bd, const void *beta, const void *C, void *cd,
                   void *D, void *dd, const void *algo, void *ws, size_t wsBytes, void *stream) {
  const auto &desc = *static_cast<Desc *>(d);
  const auto &a = *static_cast<Layout *>(ad), &b = *static_cast<Layout *>(bd),
             &c = *static_cast<Layout *>(cd);
  if (!algo || C != D || cd != dd || (wsBytes && !ws) || !supported(desc, a, b, c))
    return kNotSupported;
  ++ltStats.matmuls;
  const uint64_t K = a.rows, N = a.cols, T = b.cols;
  std::function<void()> f;
  if (isInt8(desc)) {
    int32_t al, be;
    std::memcpy(&al, alpha, 4);
    std::memcpy(&be, beta, 4);
    if (al != 1 || be != 0)
      return kInvalid;
    auto *w = static_cast<const int8_t *>(A);
    auto *x = static_cast<const int8_t *>(B);
    auto *y = static_cast<int32_t *>(D);
    f = [=] {
      for (uint64_t t = 0; t < T; ++t)
        for (uint64_t n = 0; n < N; ++n) {
          int32_t acc = 0;
          for (uint64_t k = 0; k < K; ++k)
            acc += int32_t(w[k + n * K]) * int32_t(x[k + t * K]);
          y[n + t * N] = acc;
        }
    };
  } else {
    float al, be;
    std::memcpy(&al, alpha, 4);
    std::memcpy(&be, beta, 4);
    if (al != 1.0f || be != 0.0f)
      return kInvalid;
    auto *w = static_cast<const uint16_t *>(A);
    auto *x = static_cast<const uint16_t *>(B);
    auto *y = static_cast<uint16_t *>(D);
    auto *bias = static_cast<const uint16_t *>(desc.bias);
    const uint32_t epi = desc.epilogue;
    f = [=] {
      for (uint64_t t = 0; t < T; ++t)
        for (uint64_t n = 0; n < N; ++n) {
          float acc = 0;
          for (uint64_t k = 0; k < K; ++k)
            acc += encm_f16_to_f32(w[k + n * K]) * encm_f16_to_f32(x[k + t * K]);
          if (epi != 1)
            acc += encm_f16_to_f32(bias[n]);
          if (epi == 36)
            acc = 0.5f * acc * (1.0f + std::tanh(0.7978845608f * (acc + 0.044715f * acc * acc * acc)));
          y[n + t * N] = encm_f32_to_f16(acc);
        }
    };
  }
  static EnqueueFn enqueue = [] {
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return h ? reinterpret_cast<EnqueueFn>(dlsym(h, "mock_cuda_enqueue")) : nullptr;
  }();
  if (!enqueue)
    return kInvalid;
  enqueue(stream, &f);
  return kOk;
}

} // extern "C"
