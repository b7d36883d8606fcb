/*===- cuda_kernel_abi.h - ABI between libencrt and generated CUDA code ---===*
 *
 * `encc compile --target=cuda` emits a .cu file whose kernels are all
 *
 *     extern "C" __global__ void NAME(enc_cuda_args args);
 *
 * compiled by nvcc into one fatbin (CodeObject target "cuda"). The runtime
 * loads it with cuModuleLoadData and launches one kernel per CudaPlan step
 * whose Step.kernel is not ENC_CUDA_GEMM_KERNEL.
 *
 * Step.iattrs of every CUDA step start with a launch header of
 * ENC_CUDA_LAUNCH_HEADER entries:
 *
 *   [0] grid kind (enc_cuda_grid_kind below)
 *   [1] threads per block (blockDim.x; blockDim.y = blockDim.z = 1)
 *   [2] dynamic shared memory bytes
 *   [3] p0, [4] p1: parameters of the grid kind
 *
 * and the rest of Step.iattrs (at most ENC_CUDA_MAX_IATTRS) is copied into
 * enc_cuda_args.iattrs; Step.fattrs (at most ENC_CUDA_MAX_FATTRS) into
 * enc_cuda_args.fattrs. Step.operands (at most ENC_CUDA_MAX_BUFFERS; inputs,
 * then results) become device pointers in enc_cuda_args.buffers.
 *
 * Plain C, no dependencies: included by generated code and by the runtime.
 *===----------------------------------------------------------------------===*/
#ifndef ENCRT_CUDA_KERNEL_ABI_H
#define ENCRT_CUDA_KERNEL_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ENC_CUDA_ABI_VERSION 2
#define ENC_CUDA_MAX_BUFFERS 12
#define ENC_CUDA_MAX_IATTRS 8
#define ENC_CUDA_MAX_FATTRS 4
#define ENC_CUDA_LAUNCH_HEADER 5

/* Step.kernel of a GEMM step run through cuBLASLt instead of a kernel. */
#define ENC_CUDA_GEMM_KERNEL "cublaslt"

typedef enum enc_cuda_grid_kind {
  /* grid = (ceil(tokens / p0), 1, 1): p0 token rows per block. */
  ENC_CUDA_GRID_ROWS = 0,
  /* grid = (ceil(seq / p0), p1, batch): p0 query rows per block, p1 heads;
     a block past its sequence's length returns at once. */
  ENC_CUDA_GRID_SEQ_HEAD_TILE = 1,
  /* grid = (ceil(batch / p0), 1, 1): p0 sequences per block. */
  ENC_CUDA_GRID_BATCH = 2,
  /* grid = (ceil(tokens * p1 / p0), 1, 1): p0 elements per block, p1
     elements per token. */
  ENC_CUDA_GRID_ELEMENTS = 3,
  /* Not a launch: Step.kernel is ENC_CUDA_GEMM_KERNEL. */
  ENC_CUDA_GRID_GEMM = 4
} enc_cuda_grid_kind;

/* The one kernel parameter, passed by value. */
typedef struct enc_cuda_args {
  void *buffers[ENC_CUDA_MAX_BUFFERS]; /* device pointers, Step.operands order */
  const int32_t *lengths;  /* device, [batch]: valid tokens per sequence */
  const int32_t *offsets;  /* device, [batch + 1]: packed row of each sequence */
  int64_t batch;           /* sequences in this run */
  int64_t seq;             /* padded sequence length (of the ids input) */
  int64_t tokens;          /* sum(lengths) = offsets[batch] */
  int64_t iattrs[ENC_CUDA_MAX_IATTRS];
  float fattrs[ENC_CUDA_MAX_FATTRS];
} enc_cuda_args;

/*
 * GEMM steps (grid kind ENC_CUDA_GRID_GEMM, Step.kernel "cublaslt"):
 *   Y[T, N] = X[T, K] . W[N, K]^T (+ bias[N]), all row-major, T = tokens.
 *   iattrs after the header: [N, K, epilogue]
 *     epilogue: 0 = none, 1 = bias, 2 = bias + GELU (tanh form, cuBLASLt's),
 *   operands:
 *     f16/bf16: [X (CudaPlan.dtype), W (CudaPlan.dtype), bias (CudaPlan.dtype,
 *                only when epilogue >= 1), Y (CudaPlan.dtype)]
 *               fp32 accumulate (CUBLAS_COMPUTE_32F).
 *     int8:     [X (I8), W (I8), Y (I32)]; epilogue 0; int32 accumulate
 *               (CUBLAS_COMPUTE_32I); K is a multiple of 4. A generated
 *               kernel step dequantises Y afterwards.
 */

#ifdef __cplusplus
}
#endif

#endif /* ENCRT_CUDA_KERNEL_ABI_H */
