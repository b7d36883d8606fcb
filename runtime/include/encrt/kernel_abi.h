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
 * Token ids reach kernels checked against Metadata.vocab_size only: the
 * runtime cannot tie that number to the table a kernel indexes, so a kernel
 * that indexes a table by ids clamps them to the table it was built for (the
 * generated embeddings do).
 *
 * The shared object also exports the data symbol `enc_code_info`: the ABI
 * version it was built for and the plan-kernel contract, one entry per
 * exported kernel describing exactly what it was specialised to (its
 * operands' dtypes and shapes, which of them it writes, its integer
 * attributes). The runtime reads it without running any code of the object
 * and refuses a plan step that does not match its kernel's contract, so a
 * plan edited to hand a kernel other buffers cannot make it read or write
 * out of bounds.
 *
 * Plain C, no dependencies: it is included by generated code and the runtime.
 *===----------------------------------------------------------------------===*/
#ifndef ENCRT_KERNEL_ABI_H
#define ENCRT_KERNEL_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ENC_KERNEL_ABI_VERSION 3

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

/* One kernel's contract. `signature` holds `signature_len` integers:
 *   num_operands, num_results, num_iattrs, num_fattrs,
 *   the num_iattrs Step.iattrs values the kernel was generated for,
 *   then per operand (Step.operands order): dtype (artifact.fbs DType), rank,
 *   and the rank dims exactly as the plan's Value.shape has them (static
 *   sizes, or the symbolic -1 batch, -2 sequence, -3 tokens).
 * The last num_results operands are the ones the kernel writes. */
typedef struct enc_kernel_contract {
  const char *name;         /* the exported kernel symbol */
  const int64_t *signature;
  uint32_t signature_len;
} enc_kernel_contract;

#define ENC_CONTRACT_HEADER 4 /* the four counts before the iattrs */

typedef struct enc_code_info_t {
  uint32_t abi_version; /* ENC_KERNEL_ABI_VERSION at build time */
  const char *target;   /* CodeObject.target it was built for */
  uint32_t num_kernels; /* entries of `kernels` */
  const enc_kernel_contract *kernels;
} enc_code_info_t;

/* The exported data symbol: extern const enc_code_info_t enc_code_info. */

#ifdef __cplusplus
}
#endif

#endif /* ENCRT_KERNEL_ABI_H */
