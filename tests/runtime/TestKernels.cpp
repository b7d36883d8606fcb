//===- TestKernels.cpp - A tiny code object for the runtime tests ---------===//
//
// Built as a shared object and embedded by the tests as an artifact's CPU
// code object, so the runtime is testable without the compiler. Each kernel
// splits its elements evenly over [0, num_tasks).
//
//===----------------------------------------------------------------------===//
#include "encrt/kernel_abi.h"

#include <cstdint>
#include <stdlib.h>

#ifndef TEST_ABI_VERSION
#define TEST_ABI_VERSION ENC_KERNEL_ABI_VERSION
#endif

namespace {

struct Range {
  int64_t begin, end;
};

Range share(int64_t total, int32_t task, int32_t numTasks) {
  return {total * task / numTasks, total * (task + 1) / numTasks};
}

} // namespace

extern "C" {

// The contracts of the test model's steps (ArtifactBuilder.cpp TestModel:
// hidden 32, vocab 50); dtype 0 = F32, 1 = I32.
static const int64_t kEmbed[] = {4, 1, 1, 0, 32, 1, 2, -1, -2, 0, 2, 50, 32,
                                 0, 1, 32, 0, 3, -1, -2, 32};
static const int64_t kScale[] = {2, 1, 1, 1, 32, 0, 3, -1, -2, 32, 0, 3, -1, -2, 32};
static const int64_t kAdd[] = {3, 1, 1, 0, 32, 0, 3, -1, -2, 32, 0, 3, -1, -2, 32,
                               0, 3, -1, -2, 32};
static const int64_t kMeanPool[] = {3, 1, 1, 0, 32, 0, 3, -1, -2, 32, 1, 1, -1, 0, 2, -1, 32};
#define CONTRACT(name, sig) {name, sig, sizeof(sig) / sizeof(sig[0])}
static const enc_kernel_contract kContracts[] = {
    CONTRACT("test_embed", kEmbed), CONTRACT("test_scale", kScale),
    CONTRACT("test_add", kAdd), CONTRACT("test_mean_pool", kMeanPool)};

__attribute__((visibility("default"))) extern const enc_code_info_t enc_code_info;
const enc_code_info_t enc_code_info = {TEST_ABI_VERSION, "cpu-test", 4, kContracts};

/// [ids, table[V,H], bias[H]] -> out[B,S,H] = table[ids] + bias. iattrs: {H}.
__attribute__((visibility("default"))) void
test_embed(const enc_step_ctx *ctx, int32_t task, int32_t numTasks) {
  const int32_t *ids = static_cast<const int32_t *>(ctx->buffers[0]);
  const float *table = static_cast<const float *>(ctx->buffers[1]);
  const float *bias = static_cast<const float *>(ctx->buffers[2]);
  float *out = static_cast<float *>(ctx->buffers[3]);
  const int64_t h = ctx->iattrs[0];
  Range r = share(ctx->batch * ctx->seq, task, numTasks);
  // Ids are checked against Metadata.vocab_size, which the runtime cannot
  // tie to this table: clamp to it, as generated embeddings do (kernel_abi.h).
  for (int64_t t = r.begin; t < r.end; ++t) {
    const int64_t id = ids[t] < 0 ? 0 : ids[t] >= 50 ? 49 : ids[t];
    for (int64_t j = 0; j < h; ++j)
      out[t * h + j] = table[id * h + j] + bias[j];
  }
}

/// [x] -> y = x * fattrs[0]. iattrs: {H}.
__attribute__((visibility("default"))) void
test_scale(const enc_step_ctx *ctx, int32_t task, int32_t numTasks) {
  const float *x = static_cast<const float *>(ctx->buffers[0]);
  float *y = static_cast<float *>(ctx->buffers[1]);
  Range r = share(ctx->batch * ctx->seq * ctx->iattrs[0], task, numTasks);
  for (int64_t i = r.begin; i < r.end; ++i)
    y[i] = x[i] * ctx->fattrs[0];
}

/// [a, b] -> c = a + b. iattrs: {H}.
__attribute__((visibility("default"))) void
test_add(const enc_step_ctx *ctx, int32_t task, int32_t numTasks) {
  const float *a = static_cast<const float *>(ctx->buffers[0]);
  const float *b = static_cast<const float *>(ctx->buffers[1]);
  float *c = static_cast<float *>(ctx->buffers[2]);
  Range r = share(ctx->batch * ctx->seq * ctx->iattrs[0], task, numTasks);
  for (int64_t i = r.begin; i < r.end; ++i)
    c[i] = a[i] + b[i];
}

/// [x[B,S,H], lengths] -> pooled[B,H] = mean of the valid rows. iattrs: {H}.
__attribute__((visibility("default"))) void
test_mean_pool(const enc_step_ctx *ctx, int32_t task, int32_t numTasks) {
  const float *x = static_cast<const float *>(ctx->buffers[0]);
  const int32_t *lengths = static_cast<const int32_t *>(ctx->buffers[1]);
  float *out = static_cast<float *>(ctx->buffers[2]);
  const int64_t h = ctx->iattrs[0];
  Range r = share(ctx->batch, task, numTasks);
  for (int64_t b = r.begin; b < r.end; ++b)
    for (int64_t j = 0; j < h; ++j) {
      float sum = 0;
      for (int32_t s = 0; s < lengths[b]; ++s)
        sum += x[(b * ctx->seq + s) * h + j];
      out[b * h + j] = sum / lengths[b];
    }
}

} // extern "C"

// Variants the runtime must refuse before dlopen (CodeObjectTest.cpp), each
// built as its own object by tests/runtime/CMakeLists.txt.
#ifdef TEST_CONSTRUCTOR
/// Would run inside dlopen: the test checks that it never does.
__attribute__((constructor)) static void testConstructor() {
  setenv("ENCRT_TEST_CONSTRUCTOR_RAN", "1", 1);
}
#endif

#ifdef TEST_DT_INIT
/// Linked with -Wl,-init=testDtInit: DT_INIT alone (no init array section).
extern "C" __attribute__((visibility("hidden"))) void testDtInit() {
  setenv("ENCRT_TEST_CONSTRUCTOR_RAN", "1", 1);
}
#endif

#ifdef TEST_UNDEFINED_SYMBOL
/// Defined nowhere: dlopen(RTLD_NOW) refuses the object.
extern "C" void encrt_test_symbol_defined_nowhere();
extern "C" __attribute__((visibility("default"))) void test_calls_missing() {
  encrt_test_symbol_defined_nowhere();
}
#endif

#ifdef TEST_VERSIONED
/// A good object that, as generated code does, calls a versioned libm
/// function: DT_VERNEED and DT_VERSYM (and both hash tables, by link flag).
#include <cmath>
extern "C" __attribute__((visibility("default"))) float test_versioned_exp(float x) {
  return std::exp(x);
}
#endif

#ifdef TEST_IFUNC
extern "C" {
static void ifuncTarget(const enc_step_ctx *, int32_t, int32_t) {}
/// An IFUNC resolver runs when the symbol is bound or looked up (external
/// linkage: clang wants the resolver's name as written).
__attribute__((visibility("hidden"))) enc_kernel_fn resolveIfunc() {
  setenv("ENCRT_TEST_CONSTRUCTOR_RAN", "1", 1);
  return ifuncTarget;
}
__attribute__((visibility("default"), ifunc("resolveIfunc"))) void
test_ifunc(const enc_step_ctx *, int32_t, int32_t);
}
#endif
