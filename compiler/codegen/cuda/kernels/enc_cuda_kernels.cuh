//===- enc_cuda_kernels.cuh - Everything the generated .cu includes -------===//
#ifndef ENC_CUDA_KERNELS_CUH
#define ENC_CUDA_KERNELS_CUH

#include "enc_cuda_attention.cuh"
#include "enc_cuda_attention_mma.cuh"
#include "enc_cuda_common.cuh"
#include "enc_cuda_elementwise.cuh"
#include "enc_cuda_norm.cuh"
#include "enc_cuda_pool.cuh"

#endif // ENC_CUDA_KERNELS_CUH
