/*===- kernel_abi.h - ABI between libencrt and generated CPU code ---------===*
 *
 * encc compiles each model to a shared object that exports one function per
 * plan step kernel (Step.kernel in artifact.fbs) with the signature
 * enc_kernel_fn. The runtime calls it once per task index in [0, num_tasks)
 * (possibly concurrently from its thread pool); each call does its share of
 * the step's work and writes only that share.
 *
 * A plan whose per-token values have shape [DIM_TOKENS, ...] runs PACKED:
 * sequence b's rows are [offsets[b], offsets[b+1]) and row-wise kernels
 * process `tokens` rows; the codegen knows statically which form a step has.
 *
 * The shared object also exports `enc_code_info`, so the runtime can check
 * that the code object was built for this ABI.
 *
 * Plain C, no dependencies: it is included by generated code and the runtime.
 *===----------------------------------------------------------------------===*/
#ifndef ENCRT_KERNEL_ABI_H
#define ENCRT_KERNEL_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ENC_KERNEL_ABI_VERSION 2

typedef struct enc_step_ctx {
  void *const *buffers;   /* one pointer per Step.operands entry, same order */
  const int32_t *lengths; /* valid tokens per sequence, [batch] */
  int64_t batch;          /* sequences in this run */
  int64_t seq;            /* padded sequence length of this run */
  const int64_t *iattrs;  /* Step.iattrs */
  int32_t num_iattrs;
  const float *fattrs;    /* Step.fattrs */
  int32_t num_fattrs;
  /* The packed layout (artifact.fbs DIM_TOKENS), always set by the runtime;
     padded plans ignore them. */
  const int32_t *offsets; /* [batch + 1], exclusive prefix sum of lengths */
  int64_t tokens;         /* offsets[batch] = sum(lengths) */
} enc_step_ctx;

typedef void (*enc_kernel_fn)(const enc_step_ctx *ctx, int32_t task,
                              int32_t num_tasks);

typedef struct enc_code_info_t {
  uint32_t abi_version; /* ENC_KERNEL_ABI_VERSION at build time */
  const char *target;   /* CodeObject.target it was built for */
} enc_code_info_t;

/* The exported function: const enc_code_info_t *enc_code_info(void). */
typedef const enc_code_info_t *(*enc_code_info_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* ENCRT_KERNEL_ABI_H */
